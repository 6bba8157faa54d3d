//! Trees as maps, loaded from fixture directories and compared after a run.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use std::io;

use grammar_patch::apply::{Entry, FileTree, Ident, Logged, MemTree, RootId};
use grammar_patch::paths::RelPath;

/// A directory's regular files (path -> bytes), directories and symbolic
/// links (path -> target).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub files: BTreeMap<String, Vec<u8>>,
    pub dirs: BTreeSet<String>,
    pub links: BTreeMap<String, String>,
}

impl Snapshot {
    pub fn load(dir: &Path) -> Snapshot {
        let mut snap = Snapshot::default();
        if dir.exists() {
            walk(dir, dir, &mut snap);
        }
        snap
    }

    /// Writes the snapshot under `root`, with per-file modes.
    pub fn write(&self, root: &Path, modes: &BTreeMap<String, u32>) {
        for (path, bytes) in &self.files {
            let p = root.join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, bytes).unwrap();
            if let Some(mode) = modes.get(path) {
                fs::set_permissions(&p, fs::Permissions::from_mode(*mode)).unwrap();
            }
        }
        for dir in &self.dirs {
            fs::create_dir_all(root.join(dir)).unwrap();
        }
        for (path, target) in &self.links {
            let p = root.join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            symlink(target, &p).unwrap();
        }
    }

    /// The same tree in memory, with these permission bits (default 644);
    /// a symbolic link is an entry with the link type bits.
    pub fn to_mem(&self, modes: &BTreeMap<String, u32>) -> MemTree {
        let mut tree = MemTree::default();
        tree.dirs.extend(self.dirs.iter().cloned());
        for (path, bytes) in &self.files {
            tree = tree.with_file(path, "");
            let mode = modes.get(path).copied().unwrap_or(0o644);
            *tree.files.get_mut(path).unwrap() = (bytes.clone(), mode);
        }
        for (path, target) in &self.links {
            tree = tree.with_file(path, target);
            tree.files.get_mut(path).unwrap().1 = MEM_LINK;
        }
        tree
    }

    pub fn from_mem(tree: &MemTree) -> Snapshot {
        let is_link = |mode: &u32| mode & 0o170_000 == 0o120_000;
        Snapshot {
            files: tree
                .files
                .iter()
                .filter(|(_, (_, m))| !is_link(m))
                .map(|(p, (b, _))| (p.clone(), b.clone()))
                .collect(),
            dirs: tree.dirs.clone(),
            links: tree
                .files
                .iter()
                .filter(|(_, (_, m))| is_link(m))
                .map(|(p, (b, _))| (p.clone(), String::from_utf8_lossy(b).into_owned()))
                .collect(),
        }
    }
}

/// A symbolic link's mode in a `MemTree`.
pub const MEM_LINK: u32 = 0o120_777;

fn walk(root: &Path, dir: &Path, snap: &mut Snapshot) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.file_type().is_symlink() {
            snap.links.insert(
                rel,
                fs::read_link(&path).unwrap().to_str().unwrap().to_string(),
            );
        } else if meta.is_dir() {
            snap.dirs.insert(rel);
            walk(root, &path, snap);
        } else {
            snap.files.insert(rel, fs::read(&path).unwrap());
        }
    }
}

/// Mode bits of a file on disk.
pub fn mode_of(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A readable diff of two snapshots for assertion messages.
pub fn describe_difference(want: &Snapshot, got: &Snapshot) -> String {
    let mut out = String::new();
    for (path, bytes) in &want.files {
        match got.files.get(path) {
            None => out.push_str(&format!("missing {path}\n")),
            Some(g) if g != bytes => out.push_str(&format!(
                "{path}: want {:?}\n{path}:  got {:?}\n",
                String::from_utf8_lossy(bytes),
                String::from_utf8_lossy(g)
            )),
            _ => {}
        }
    }
    for path in got.files.keys().filter(|p| !want.files.contains_key(*p)) {
        out.push_str(&format!("unexpected {path}\n"));
    }
    for dir in want.dirs.symmetric_difference(&got.dirs) {
        let what = if want.dirs.contains(dir) {
            "missing"
        } else {
            "unexpected"
        };
        out.push_str(&format!("{what} directory {dir}/\n"));
    }
    out
}

/// Checks a JSON result against `schema/result.schema.json`, the one shape
/// of every `--json` outcome.
pub fn assert_valid_result(value: &serde_json::Value) {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let schema = serde_json::from_str(include_str!("../../schema/result.schema.json"))
            .expect("the schema is JSON");
        jsonschema::validator_for(&schema).expect("the schema is a JSON Schema")
    });
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{value}\ndoes not fit the schema: {errors:#?}"
    );
}

/// A mutating call of a [`FileTree`], as a [`Hooked`] tree's hook sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Stage,
    Exchange,
    Rename,
    Remove,
    CreateDir,
    RemoveDir,
    Symlink,
    LogBegin,
    LogAppend,
    LogEnd,
    LogSetAside,
}

/// What a hook makes of a call.
pub enum Then {
    /// Carry it out.
    Go,
    /// Fail it, having done nothing.
    Fail(std::io::Error),
    /// Do half of it (half a staged file, half a journal record), then
    /// fail, as a process killed in the middle leaves it.
    Torn(std::io::Error),
}

type Hook = Box<dyn FnMut(Call, &RelPath) -> Then>;

/// A tree whose every mutating call first asks a hook: to fail a step, to
/// tear it, or to let another "process" act before it.
pub struct Hooked<T> {
    pub inner: T,
    hook: Hook,
    /// The paths a read ahead was asked for, in order.
    pub aheads: std::cell::RefCell<Vec<String>>,
}

impl<T: FileTree> Hooked<T> {
    pub fn new(inner: T, hook: impl FnMut(Call, &RelPath) -> Then + 'static) -> Self {
        Hooked {
            inner,
            hook: Box::new(hook),
            aheads: Default::default(),
        }
    }

    fn ask(&mut self, call: Call, path: &RelPath) -> Then {
        (self.hook)(call, path)
    }
}

fn journal_path() -> RelPath {
    RelPath::new("(journal)").unwrap()
}

impl<T: FileTree> FileTree for Hooked<T> {
    fn entry(&self, path: &RelPath) -> io::Result<Entry> {
        self.inner.entry(path)
    }
    fn ident(&self, path: &RelPath) -> io::Result<Option<Ident>> {
        self.inner.ident(path)
    }
    fn link_on_path(&self, path: &RelPath) -> io::Result<Option<(RelPath, String)>> {
        self.inner.link_on_path(path)
    }
    fn read(&self, path: &RelPath, limit: u64) -> io::Result<Vec<u8>> {
        self.inner.read(path, limit)
    }
    fn read_text(
        &self,
        path: &RelPath,
        limit: u64,
    ) -> io::Result<grammar_patch::lossless::Decoded> {
        self.inner.read_text(path, limit)
    }
    fn read_ahead(&self, path: &RelPath, limit: u64) {
        self.aheads.borrow_mut().push(path.to_string());
        self.inner.read_ahead(path, limit)
    }
    fn reads_ahead(&self, path: &RelPath) -> bool {
        self.inner.reads_ahead(path)
    }
    fn list(&self, dir: &RelPath) -> io::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn read_link(&self, path: &RelPath) -> io::Result<String> {
        self.inner.read_link(path)
    }
    fn stage(
        &mut self,
        path: &RelPath,
        chunks: &[&[u8]],
        mode: Option<u32>,
        owner: Option<(u32, u32)>,
    ) -> io::Result<Ident> {
        match self.ask(Call::Stage, path) {
            Then::Go => self.inner.stage(path, chunks, mode, owner),
            Then::Fail(e) => Err(e),
            Then::Torn(e) => {
                let all = chunks.concat();
                let _ = self
                    .inner
                    .stage(path, &[&all[..all.len() / 2]], mode, owner);
                Err(e)
            }
        }
    }
    fn exchange(&mut self, a: &RelPath, b: &RelPath) -> io::Result<()> {
        match self.ask(Call::Exchange, b) {
            Then::Go => self.inner.exchange(a, b),
            Then::Fail(e) | Then::Torn(e) => Err(e),
        }
    }
    fn rename(&mut self, from: &RelPath, to: &RelPath) -> io::Result<()> {
        match self.ask(Call::Rename, from) {
            Then::Go => self.inner.rename(from, to),
            Then::Fail(e) | Then::Torn(e) => Err(e),
        }
    }
    fn remove(&mut self, path: &RelPath) -> io::Result<()> {
        match self.ask(Call::Remove, path) {
            Then::Go => self.inner.remove(path),
            Then::Fail(e) | Then::Torn(e) => Err(e),
        }
    }
    fn create_dir(&mut self, path: &RelPath) -> io::Result<()> {
        match self.ask(Call::CreateDir, path) {
            Then::Go => self.inner.create_dir(path),
            Then::Fail(e) | Then::Torn(e) => Err(e),
        }
    }
    fn remove_dir(&mut self, path: &RelPath) -> io::Result<()> {
        match self.ask(Call::RemoveDir, path) {
            Then::Go => self.inner.remove_dir(path),
            Then::Fail(e) | Then::Torn(e) => Err(e),
        }
    }
    fn symlink(&mut self, path: &RelPath, target: &str) -> io::Result<()> {
        match self.ask(Call::Symlink, path) {
            Then::Go => self.inner.symlink(path, target),
            Then::Fail(e) | Then::Torn(e) => Err(e),
        }
    }
    fn root_id(&self) -> RootId {
        self.inner.root_id()
    }
    fn log_read(&self) -> io::Result<Logged> {
        self.inner.log_read()
    }
    fn log_begin(&mut self, header: &[u8]) -> io::Result<()> {
        match self.ask(Call::LogBegin, &journal_path()) {
            Then::Go => self.inner.log_begin(header),
            Then::Fail(e) => Err(e),
            Then::Torn(e) => {
                let _ = self.inner.log_begin(&header[..header.len() / 2]);
                Err(e)
            }
        }
    }
    fn log_append(&mut self, record: &[u8]) -> io::Result<()> {
        match self.ask(Call::LogAppend, &journal_path()) {
            Then::Go => self.inner.log_append(record),
            Then::Fail(e) => Err(e),
            Then::Torn(e) => {
                let _ = self.inner.log_append(&record[..record.len() / 2]);
                Err(e)
            }
        }
    }
    fn log_end(&mut self) -> io::Result<()> {
        match self.ask(Call::LogEnd, &journal_path()) {
            Then::Go => self.inner.log_end(),
            Then::Fail(e) | Then::Torn(e) => Err(e),
        }
    }
    fn log_set_aside(&mut self) -> io::Result<String> {
        match self.ask(Call::LogSetAside, &journal_path()) {
            Then::Go => self.inner.log_set_aside(),
            Then::Fail(e) | Then::Torn(e) => Err(e),
        }
    }
}
