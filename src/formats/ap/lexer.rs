//! ap's line lexer: each line of the patch is one terminal of
//! `grammars/ap.lalrpop`, its class decided by the line's first bytes and,
//! for a directive, its keyword and arguments. Each class's Lark
//! definition is written above its terminal in the grammar, and
//! `the_lexer_classes_lines_as_the_export_defines_them` holds the two
//! together. The parse reads the lines under a value's directive as one
//! terminal instead ([`Lexer::values`]): it needs only where they end.
//!
//! The lexer keeps what the classes depend on: the patch ID (from the
//! header, or from the first `FILE` of a patch without one), whether `END`
//! was read (every line after it is blank or the ignored tail), and
//! whether the line above was a `FILE` block's path (where `CREATE` is an
//! action, not a new block).

use super::KEYWORDS;
use crate::ir::Span;

/// A line's class: the grammar's terminals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    Blank,
    Indented,
    Hash,
    Caret,
    Filled,
    Foreign,
    Header,
    File,
    FileWithPath,
    Create,
    CreateAction,
    Replace,
    Insert,
    Delete,
    Recreate,
    Rename,
    Anchor,
    Snippet,
    Tail,
    Content,
    Opt,
    End,
    Unknown,
    Ignored,
    /// The lines of a value, all of them (the parse's lexer only).
    Lines,
}

impl Tok {
    /// The terminal's name in `grammars/ap.lalrpop` (and its Lark export).
    #[cfg(feature = "internals")]
    pub fn terminal(self) -> &'static str {
        match self {
            Tok::Blank => "BLANK_LINE",
            Tok::Indented => "INDENTED_LINE",
            Tok::Hash => "HASH_LINE",
            Tok::Caret => "CARET_LINE",
            Tok::Filled => "FILLED_LINE",
            Tok::Foreign => "FOREIGN_LINE",
            Tok::Header => "HEADER",
            Tok::File => "FILE_DIRECTIVE",
            Tok::FileWithPath => "FILE_WITH_PATH",
            Tok::Create => "CREATE_DIRECTIVE",
            Tok::CreateAction => "CREATE_ACTION",
            Tok::Replace => "REPLACE_DIRECTIVE",
            Tok::Insert => "INSERT_DIRECTIVE",
            Tok::Delete => "DELETE_DIRECTIVE",
            Tok::Recreate => "RECREATE_DIRECTIVE",
            Tok::Rename => "RENAME_DIRECTIVE",
            Tok::Anchor => "ANCHOR_KEY",
            Tok::Snippet => "SNIPPET_KEY",
            Tok::Tail => "TAIL_KEY",
            Tok::Content => "CONTENT_KEY",
            Tok::Opt => "OPTION_DIRECTIVE",
            Tok::End => "END_DIRECTIVE",
            Tok::Unknown => "UNKNOWN_DIRECTIVE",
            Tok::Ignored => "IGNORED_TAIL",
            Tok::Lines => "VALUE_LINES",
        }
    }
}

/// The terminal of each line of `text` as the lexer reads it, `None` for
/// a line no terminal takes (where lexing stops).
#[cfg(feature = "internals")]
pub fn line_terminals(text: &str) -> Vec<Option<&'static str>> {
    let mut out = vec![];
    for t in Lexer::new(text) {
        let Ok((_, tok, _)) = t else {
            out.push(None);
            break;
        };
        out.push(Some(tok.terminal()));
    }
    out
}

/// A line no terminal takes: a directive keyword with arguments it does not
/// take, or a header with a version this patcher does not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LexError {
    /// A directive keyword followed by something it does not take; at the
    /// start of the line.
    Arguments { line: usize, keyword: &'static str },
    /// `<ID> AP` and then no version 3.1 or 3.2; at where the version
    /// should be.
    Version { at: usize },
    /// A last line without `\n` (the patch's text always has one; a text
    /// given to the parser directly may not); at the end.
    Unterminated { at: usize },
}

/// The lexer over a patch's text, every line of which ends with `\n` (but
/// what follows `END`, which is ignored whole).
pub struct Lexer<'t> {
    text: &'t [u8],
    at: usize,
    id: Option<&'t [u8]>,
    ended: bool,
    /// The line above was a `FILE` directive or its path.
    after_file: bool,
    /// A value's lines are read as one terminal, `VALUE_LINES` (see
    /// [`Lexer::values`]).
    runs: bool,
    /// The last terminal opens a value: the lines up to the next directive.
    in_value: bool,
    /// The tabs between the patch ID and a directive: each read as a
    /// space, with a warning.
    pub pads: Vec<Span>,
}

impl<'t> Lexer<'t> {
    pub fn new(text: &'t str) -> Self {
        Lexer {
            text: text.as_bytes(),
            at: 0,
            id: None,
            ended: false,
            after_file: false,
            runs: false,
            in_value: false,
            pads: vec![],
        }
    }

    /// The lexer the parse reads: as [`Lexer::new`], but the lines under a
    /// directive that opens a value (a head, `RENAME`, a key, an unknown
    /// directive) are one terminal, `VALUE_LINES`, up to the next
    /// directive, as `Value` in the grammar takes them. The export's
    /// classes of those lines are not needed there, and one terminal is one
    /// step of the LR parser instead of two a line.
    pub fn values(text: &'t str) -> Self {
        Lexer {
            runs: true,
            ..Lexer::new(text)
        }
    }

    /// Whether `line` starts with the patch ID and a blank: a directive.
    fn is_directive_line(&self, line: &[u8]) -> bool {
        self.id
            .is_some_and(|id| line.len() > 8 && is_blank(line[8]) && line.starts_with(id))
    }

    /// The end of the value's lines from `self.at`: every line up to the
    /// next directive, or up to a last line without `\n`, which is lexed
    /// alone for its error.
    fn value_end(&self) -> usize {
        let mut at = self.at;
        for i in crate::newlines::newlines(&self.text[self.at..]) {
            let feed = self.at + i;
            if self.is_directive_line(&self.text[at..feed]) {
                break;
            }
            at = feed + 1;
        }
        at
    }
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn all_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| is_blank(b))
}

/// Whether a line starts with 8 hex digits and a blank.
fn hex_led(line: &[u8]) -> bool {
    line.len() > 8 && is_blank(line[8]) && line[..8].iter().all(u8::is_ascii_hexdigit)
}

/// The count of leading spaces (not tabs).
fn spaces(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|&&b| b == b' ').count()
}

/// The class of a line that is no directive of this patch.
fn text_class(line: &[u8]) -> Tok {
    match line.first() {
        None => Tok::Blank,
        Some(&b) if is_blank(b) => {
            if all_blank(line) {
                Tok::Blank
            } else {
                Tok::Indented
            }
        }
        Some(b'#') => Tok::Hash,
        Some(b'^') => Tok::Caret,
        Some(_) if hex_led(line) => Tok::Foreign,
        Some(_) => Tok::Filled,
    }
}

/// `FILE`'s arguments, `rest` being the line after the keyword: an
/// optional newline mode, then an optional inline path. `None` if they do
/// not read as that. Returns the mode and the inline path's offset in
/// `rest`.
pub fn file_args(rest: &[u8]) -> Option<(Option<&str>, Option<usize>)> {
    let mut at = 0;
    let mut mode = None;
    let s = spaces(rest);
    if s > 0 {
        let after = &rest[s..];
        let word = ["CRLF", "LF", "CR"]
            .into_iter()
            .find(|m| after.starts_with(m.as_bytes()));
        if let Some(m) = word {
            let end = s + m.len();
            if rest.get(end).is_none_or(|&b| is_blank(b)) {
                mode = Some(m);
                at = end;
            }
        }
    }
    let mut path = None;
    let s = spaces(&rest[at..]);
    if s > 0 && rest.get(at + s).is_some_and(|&b| !is_blank(b)) {
        path = Some(at + s);
        at = rest.len();
    }
    all_blank(&rest[at..]).then_some((mode, path))
}

/// An option's count, `rest` being the line after the keyword: `Some` of
/// the count if there is one, `None` if the arguments do not read.
pub fn option_args(rest: &[u8]) -> Option<Option<&str>> {
    let s = spaces(rest);
    let digits = rest[s..].iter().take_while(|b| b.is_ascii_digit()).count();
    if s > 0 && digits > 0 {
        let count = &rest[s..s + digits.min(6)];
        let count = std::str::from_utf8(count).expect("ASCII digits");
        return all_blank(&rest[s + digits.min(6)..]).then_some(Some(count));
    }
    all_blank(rest).then_some(None)
}

impl<'t> Lexer<'t> {
    /// A line that starts with the patch ID and a blank.
    fn directive(&mut self, start: usize, line: &'t [u8]) -> Result<Tok, LexError> {
        let pad = line[8..].iter().take_while(|&&b| is_blank(b)).count();
        if let Some(tab) = line[8..8 + pad].iter().position(|&b| b == b'\t') {
            self.pads.push(Span::new(start + 8 + tab, start + 8 + pad));
        }
        let from = 8 + pad;
        let len = line[from..].iter().take_while(|&&b| !is_blank(b)).count();
        let word = &line[from..from + len];
        let rest = &line[from + len..];
        let Some(&keyword) = KEYWORDS.iter().find(|k| k.as_bytes() == word) else {
            return Ok(Tok::Unknown);
        };
        let bad = Err(LexError::Arguments {
            line: start,
            keyword,
        });
        let tok = match keyword {
            "FILE" => match file_args(rest) {
                Some((_, Some(_))) => Tok::FileWithPath,
                Some((_, None)) => Tok::File,
                None => return bad,
            },
            "include_leading_blank_lines" | "include_trailing_blank_lines" | "scope_end" => {
                return option_args(rest).map_or(bad, |_| Ok(Tok::Opt));
            }
            _ if !all_blank(rest) => return bad,
            "CREATE" if self.after_file => Tok::CreateAction,
            "CREATE" => Tok::Create,
            "REPLACE" => Tok::Replace,
            "INSERT_AFTER" | "INSERT_BEFORE" => Tok::Insert,
            "DELETE" => Tok::Delete,
            "RECREATE" => Tok::Recreate,
            "RENAME" => Tok::Rename,
            "anchor" => Tok::Anchor,
            "snippet" => Tok::Snippet,
            "snippet_tail" => Tok::Tail,
            "content" => Tok::Content,
            _ => {
                self.ended = true;
                Tok::End
            }
        };
        Ok(tok)
    }

    /// A line before the patch ID is known: the header, the `FILE` of a
    /// patch without one, or text.
    fn first(&mut self, start: usize, line: &'t [u8]) -> Result<Tok, LexError> {
        if !(hex_led(line) && line[8] == b' ') {
            return Ok(text_class(line));
        }
        let id = &line[..8];
        let after = 8 + spaces(&line[8..]);
        let rest = &line[after..];
        if let Some(args) = rest.strip_prefix(b"FILE") {
            if let Some((_, path)) = file_args(args) {
                self.id = Some(id);
                return Ok(if path.is_some() {
                    Tok::FileWithPath
                } else {
                    Tok::File
                });
            }
        }
        let Some(version) = rest.strip_prefix(b"AP") else {
            return Ok(Tok::Foreign);
        };
        let s = spaces(version);
        let at = start + after + 2 + s;
        let v = &version[s..];
        if s == 0 || !(v.starts_with(b"3.1") || v.starts_with(b"3.2")) || !all_blank(&v[3..]) {
            return Err(LexError::Version { at });
        }
        self.id = Some(id);
        Ok(Tok::Header)
    }
}

impl<'t> Iterator for Lexer<'t> {
    type Item = Result<(usize, Tok, usize), LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.at;
        let rest = self.text.get(start..).filter(|r| !r.is_empty())?;
        let (line, end) = match crate::bytes::find(b'\n', rest) {
            Some(i) => (&rest[..i], start + i + 1),
            None if self.ended => (rest, self.text.len()),
            None => {
                self.at = self.text.len();
                return Some(Err(LexError::Unterminated {
                    at: self.text.len(),
                }));
            }
        };
        if self.runs && self.in_value && self.id.is_some() {
            self.in_value = false;
            let end = self.value_end();
            if end > start {
                self.at = end;
                return Some(Ok((start, Tok::Lines, end)));
            }
        }
        self.at = end;
        if self.ended {
            if all_blank(line) && end > start + line.len() {
                return Some(Ok((start, Tok::Blank, end)));
            }
            self.at = self.text.len();
            return Some(Ok((start, Tok::Ignored, self.text.len())));
        }
        let tok = match self.id {
            Some(_) if self.is_directive_line(line) => self.directive(start, line),
            Some(_) => Ok(text_class(line)),
            None => self.first(start, line),
        };
        self.after_file = match tok {
            Ok(Tok::File | Tok::FileWithPath) => true,
            Ok(t) => self.after_file && !is_directive(t),
            Err(_) => false,
        };
        self.in_value = tok.is_ok_and(opens_value);
        Some(tok.map(|t| (start, t, end)))
    }
}

/// Whether a class is a directive's that the lines under it are the
/// value of (`Value` in the grammar).
fn opens_value(t: Tok) -> bool {
    matches!(
        t,
        Tok::File
            | Tok::FileWithPath
            | Tok::Create
            | Tok::Rename
            | Tok::Anchor
            | Tok::Snippet
            | Tok::Tail
            | Tok::Content
            | Tok::Unknown
    )
}

/// Whether a class is a directive's.
fn is_directive(t: Tok) -> bool {
    !matches!(
        t,
        Tok::Blank
            | Tok::Indented
            | Tok::Hash
            | Tok::Caret
            | Tok::Filled
            | Tok::Foreign
            | Tok::Lines
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes of the lines of `text` after a header with ID `a1b2c3d4`.
    fn classes(lines: &str) -> Vec<Result<Tok, LexError>> {
        let text = format!("a1b2c3d4 AP 3.2\n{lines}");
        Lexer::new(&text)
            .skip(1)
            .map(|t| t.map(|(_, tok, _)| tok))
            .collect()
    }

    #[test]
    fn a_keyword_with_what_it_does_not_take_is_a_lexer_error() {
        let one = |line: &str| classes(&format!("{line}\n")).remove(0);
        let refused = |line: &str| matches!(one(line), Err(LexError::Arguments { .. }));
        assert!(refused("a1b2c3d4 REPLACE foo"));
        assert!(refused("a1b2c3d4 scope_end 1234567"));
        assert!(refused("a1b2c3d4 scope_end\t3"));
        assert!(refused("a1b2c3d4 FILE\tm.py"));
        assert_eq!(one("a1b2c3d4 scope_end 123456 "), Ok(Tok::Opt));
        assert_eq!(one("a1b2c3d4 FILE CRLF"), Ok(Tok::File));
        assert_eq!(one("a1b2c3d4 FILE LF m.py"), Ok(Tok::FileWithPath));
        // A mode word must end at a blank: `LFx` is a path.
        assert_eq!(one("a1b2c3d4 FILE LFx"), Ok(Tok::FileWithPath));
        assert_eq!(one("a1b2c3d4 REPLACEx"), Ok(Tok::Unknown));
        assert_eq!(one("a1b2c3d4 \tREPLACE"), Ok(Tok::Replace));
        assert_eq!(one("A1B2C3D4 REPLACE"), Ok(Tok::Foreign));
        assert_eq!(one("a1b2c3d4\tREPLACE"), Ok(Tok::Replace));
    }

    #[test]
    fn create_is_an_action_only_right_under_a_files_path() {
        let toks = classes(
            "a1b2c3d4 FILE\nm.py\n\na1b2c3d4 CREATE\na1b2c3d4 content\nx\na1b2c3d4 CREATE\nn.py\n",
        );
        let toks: Vec<Tok> = toks.into_iter().map(Result::unwrap).collect();
        assert_eq!(toks[3], Tok::CreateAction);
        assert_eq!(toks[6], Tok::Create);
    }

    #[test]
    fn a_last_line_without_its_newline_is_refused_but_after_end() {
        let toks = classes("a1b2c3d4 FILE\nm.py");
        assert_eq!(toks[1], Err(LexError::Unterminated { at: 34 }));
        let toks = classes("a1b2c3d4 END\n\n  ");
        assert_eq!(toks, [Ok(Tok::End), Ok(Tok::Blank), Ok(Tok::Ignored)]);
    }

    /// What [`Lexer::values`] should give for `text`: [`Lexer::new`]'s
    /// terminals, with the text lines after a directive that opens a value
    /// taken together as one `VALUE_LINES`.
    fn merged(text: &str) -> Vec<Result<(usize, Tok, usize), LexError>> {
        let mut out: Vec<Result<(usize, Tok, usize), LexError>> = vec![];
        let mut in_value = false;
        for t in Lexer::new(text) {
            match (t, out.last_mut()) {
                (Ok((_, tok, end)), Some(Ok((_, Tok::Lines, last)))) if !is_directive(tok) => {
                    *last = end;
                }
                (Ok((start, tok, end)), _) if in_value && !is_directive(tok) => {
                    out.push(Ok((start, Tok::Lines, end)));
                }
                (t, _) => {
                    in_value = t.is_ok_and(|(_, tok, _)| opens_value(tok));
                    out.push(t);
                }
            }
        }
        out
    }

    #[test]
    fn a_values_lines_are_one_terminal_for_the_parse() {
        let text = "# c\na1b2c3d4 AP 3.2\n\nstray\na1b2c3d4 FILE\nm.py\n\na1b2c3d4 CREATE\n\
                    a1b2c3d4 content\nx\n\n  y\n# z\n^w\nffffffff REPLACE\na1b2c3d4 REPLACE\n\
                    a1b2c3d4 snippet\nv\na1b2c3d4 scope_end 2\n\na1b2c3d4 content\nlast";
        let got: Vec<_> = Lexer::values(text).collect();
        assert_eq!(got, merged(text));
        let toks: Vec<Tok> = got
            .iter()
            .map(|t| t.map_or(Tok::Unknown, |t| t.1))
            .collect();
        use Tok::*;
        assert_eq!(
            toks,
            [
                Hash,
                Header,
                Blank,
                Filled,
                File,
                Lines,
                CreateAction,
                Content,
                Lines,
                Replace,
                Snippet,
                Lines,
                Opt,
                Blank,
                Content,
                Unknown
            ]
        );
        // The path's lines run to `CREATE`, which stays the file's action.
        let path = got[5].unwrap();
        assert_eq!(&text[path.0..path.2], "m.py\n\n");
        // The content's lines take the blank and foreign lines among them.
        let content = got[8].unwrap();
        assert_eq!(
            &text[content.0..content.2],
            "x\n\n  y\n# z\n^w\nffffffff REPLACE\n"
        );
        // A last line without `\n` is lexed alone, for its error.
        assert_eq!(
            got.last(),
            Some(&Err(LexError::Unterminated { at: text.len() }))
        );
    }

    /// Every ap patch of the fixtures lexes for the parse as its lines
    /// do, merged.
    #[test]
    fn the_fixtures_lex_for_the_parse_as_their_lines_merged() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ap");
        let mut seen = 0;
        for case in std::fs::read_dir(dir).expect("ap fixtures") {
            let Ok(text) = std::fs::read_to_string(case.expect("entry").path().join("patch"))
            else {
                continue;
            };
            assert_eq!(Lexer::values(&text).collect::<Vec<_>>(), merged(&text));
            seen += 1;
        }
        assert!(seen > 100, "{seen} ap fixtures");
    }

    #[test]
    fn a_tab_after_the_id_is_recorded() {
        let text = "a1b2c3d4 AP 3.2\na1b2c3d4  \t REPLACE\n";
        let mut lexer = Lexer::new(text);
        assert_eq!(lexer.by_ref().count(), 2);
        assert_eq!(lexer.pads, [Span::new(26, 28)]);
    }
}
