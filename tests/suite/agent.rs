//! What a model is given: tool definitions, prompts and their worked
//! examples. Each example must apply cleanly to its own file, with no
//! warning, and be in the language of the grammar the tool constrains to.

use grammar_patch::agent::{self, Provider};
use grammar_patch::apply::MemTree;
use grammar_patch::formats::Format;
use grammar_patch::{run, Mode};

use super::grammar::Engine;

fn supported() -> impl Iterator<Item = Format> {
    Format::ALL.iter().copied().filter(|f| f.is_supported())
}

#[test]
fn every_example_applies_cleanly_and_is_in_the_grammar() {
    for format in supported() {
        let ex = agent::example(format).unwrap();
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
            Engine::new(format.lark_grammar().unwrap()).accepts(ex.patch),
            "{format}: the example is outside the Lark grammar"
        );
        let prompt = agent::prompt(format).unwrap();
        assert!(
            prompt.contains(ex.patch) && prompt.contains(ex.before),
            "{format}"
        );
    }
}

#[test]
fn tool_definitions_have_each_providers_shape() {
    for format in supported() {
        let ex = agent::example(format).unwrap();
        let openai = agent::tool(format, Provider::OpenAi).unwrap();
        let keys: Vec<&String> = openai.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "name", "description", "format"], "{format}");
        assert_eq!(openai["type"], "custom");
        assert_eq!(openai["format"]["type"], "grammar");
        assert_eq!(openai["format"]["syntax"], "lark");
        // Exactly what `grammar <format>` prints.
        assert_eq!(
            openai["format"]["definition"],
            format.lark_grammar().unwrap()
        );
        let description = openai["description"].as_str().unwrap();
        assert!(description.contains(ex.patch), "{format}: no example");
        assert!(
            description.contains("context_not_found"),
            "{format}: no errors"
        );

        let anthropic = agent::tool(format, Provider::Anthropic).unwrap();
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
            ("anthropic", Provider::Anthropic),
        ] {
            let out = std::process::Command::new(bin)
                .args(["tool", format.name(), "--provider", flag])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0));
            let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(printed, agent::tool(format, provider).unwrap());
        }
        let out = std::process::Command::new(bin)
            .args(["prompt", format.name()])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            agent::prompt(format).unwrap()
        );
    }
    let out = std::process::Command::new(bin)
        .args(["tool", "udiff", "--provider", "openai", "--id", "0123abcd"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--id is for ap only");
    // ap has neither yet: a usage error, not an empty definition.
    for args in [
        &["tool", "ap", "--provider", "openai"][..],
        &["prompt", "ap"],
    ] {
        let out = std::process::Command::new(bin).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
