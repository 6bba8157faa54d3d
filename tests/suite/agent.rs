//! What a model is given: tool definitions, prompts and their worked
//! examples. Each example must apply cleanly to its own file, with no
//! warning, and be in the language of the grammar the tool constrains to.

use grammar_patch::agent::{self, Provider};
use grammar_patch::apply::MemTree;
use grammar_patch::formats::Format;
use grammar_patch::{run, Mode};

use super::grammar::Engine;

fn supported() -> impl Iterator<Item = Format> {
    Format::ALL.iter().copied()
}

#[test]
fn every_example_applies_cleanly_and_is_in_the_grammar() {
    for format in supported() {
        let ex = agent::example(format);
        let mut tree = MemTree::default().with_file(ex.path, ex.before);
        let outcome = run(
            ex.patch,
            Some(format),
            Mode::Apply { dry_run: false },
            Some(&mut tree),
            None,
        );
        assert!(
            outcome.ok() && outcome.diagnostics.is_empty(),
            "{format}: {:?}",
            outcome
                .diagnostics
                .iter()
                .map(|d| &d.message)
                .collect::<Vec<_>>()
        );
        assert_eq!(
            String::from_utf8(tree.files[ex.path].0.clone()).unwrap(),
            ex.after,
            "{format}"
        );
        assert!(
            Engine::new(format.lark_grammar()).accepts(ex.patch),
            "{format}: the example is outside the Lark grammar"
        );
        let prompt = agent::prompt(format);
        assert!(
            prompt.contains(ex.patch) && prompt.contains(ex.before),
            "{format}"
        );
    }
}

#[test]
fn tool_definitions_have_each_providers_shape() {
    for format in supported() {
        let ex = agent::example(format);
        // ap tools are bound to one patch ID.
        let id = (format == Format::Ap).then_some("0badf00d");
        let patch = ex.patch.replace(agent::EXAMPLE_ID, "0badf00d");
        let openai = agent::tool(format, Provider::OpenAi, id, "apply_patch").unwrap();
        let keys: Vec<&String> = openai.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "name", "description", "format"], "{format}");
        assert_eq!(openai["type"], "custom");
        assert_eq!(openai["format"]["type"], "grammar");
        assert_eq!(openai["format"]["syntax"], "lark");
        // Exactly what `grammar <format>` prints.
        let definition = openai["format"]["definition"].as_str().unwrap();
        assert_eq!(definition, format.lark_grammar_for(id).unwrap());
        let description = openai["description"].as_str().unwrap();
        assert!(description.contains(&patch), "{format}: no example");
        assert!(
            Engine::new(definition).accepts(&patch),
            "{format}: example outside the tool's grammar"
        );
        if format == Format::Ap {
            assert!(!description.contains("<ID>") && !description.contains(agent::EXAMPLE_ID));
            assert!(
                !Engine::new(definition).accepts(ex.patch),
                "a grammar for one ID must refuse a patch with another"
            );
        }
        assert!(
            description.contains("context_not_found"),
            "{format}: no errors"
        );

        // Chat Completions: the same tool, in its `custom` envelope.
        let chat = agent::tool(format, Provider::OpenAiChat, id, "edit_files").unwrap();
        let keys: Vec<&String> = chat.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "custom"], "{format}");
        assert_eq!(chat["type"], "custom");
        let custom = &chat["custom"];
        assert_eq!(custom["name"], "edit_files");
        assert_eq!(custom["description"], openai["description"]);
        assert_eq!(custom["format"]["type"], "grammar");
        assert_eq!(custom["format"]["grammar"]["syntax"], "lark");
        assert_eq!(custom["format"]["grammar"]["definition"], definition);

        let anthropic = agent::tool(format, Provider::Anthropic, id, "apply_patch").unwrap();
        let keys: Vec<&String> = anthropic.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["name", "description", "input_schema"], "{format}");
        assert_eq!(anthropic["description"], openai["description"]);
        let schema = &anthropic["input_schema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["patch"]["type"], "string");
        assert_eq!(schema["required"], serde_json::json!(["patch"]));
    }
}

#[test]
fn tool_and_prompt_commands_print_them() {
    let bin = env!("CARGO_BIN_EXE_grammar-patch");
    for format in supported() {
        for (flag, provider) in [
            ("openai", Provider::OpenAi),
            ("openai-chat", Provider::OpenAiChat),
            ("anthropic", Provider::Anthropic),
        ] {
            let id = (format == Format::Ap).then_some("0badf00d");
            let mut args = vec!["tool", format.name(), "--provider", flag];
            args.extend(id.map(|id| ["--id", id]).into_iter().flatten());
            let out = std::process::Command::new(bin)
                .args(&args)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0));
            let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(
                printed,
                agent::tool(format, provider, id, "apply_patch").unwrap()
            );
            // `--name` renames it; a name no provider takes is a usage error.
            args.extend(["--name", "edit_files"]);
            let out = std::process::Command::new(bin)
                .args(&args)
                .output()
                .unwrap();
            let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(
                printed,
                agent::tool(format, provider, id, "edit_files").unwrap()
            );
            *args.last_mut().unwrap() = "edit files";
            let out = std::process::Command::new(bin)
                .args(&args)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{args:?}");
        }
        let out = std::process::Command::new(bin)
            .args(["prompt", format.name()])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            agent::prompt(format)
        );
    }
    let out = std::process::Command::new(bin)
        .args(["tool", "udiff", "--provider", "openai", "--id", "0123abcd"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--id is for ap only");
    // Upper-case hex is an ID as the parser reads headers; these are not.
    for bad in ["0badf00", "0badf00dd", "fix_bug1", "0badf0g0"] {
        let out = std::process::Command::new(bin)
            .args(["tool", "ap", "--provider", "openai", "--id", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--id {bad}");
        assert!(out.stdout.is_empty());
    }
    // Without --id, each ap tool gets a fresh ID, used by its grammar and its description.
    let fresh = || {
        let out = std::process::Command::new(bin)
            .args(["tool", "ap", "--provider", "openai"])
            .output()
            .unwrap();
        let tool: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let description = tool["description"].as_str().unwrap().to_string();
        let at = description.find("is always `").unwrap() + "is always `".len();
        let id = description[at..at + 8].to_string();
        assert!(agent::is_patch_id(&id), "{id}");
        assert_eq!(
            tool["format"]["definition"],
            *Format::Ap.lark_grammar_for(Some(&id)).unwrap()
        );
        id
    };
    assert_ne!(fresh(), fresh());
}
