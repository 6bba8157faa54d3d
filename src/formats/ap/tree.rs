//! The parse tree `grammars/ap.lalrpop` builds: spans into the parsed
//! text, the lines of a directive without their `\n`, values as the lines
//! they hold.

use crate::ir::Span;

/// A whole patch.
pub struct Tree {
    /// The header line; `None` in a patch that starts with `FILE`.
    pub header: Option<Span>,
    /// Text lines between the header and the first block.
    pub strays: Vec<Span>,
    pub blocks: Vec<Block>,
    pub end: Option<End>,
}

/// `END` and, if any, the text after it.
pub struct End {
    pub ignored: Option<Span>,
}

/// A file block: `FILE` or `CREATE`, the lines under it, its items.
pub struct Block {
    pub head: Span,
    pub value: Span,
    pub items: Vec<Item>,
}

/// What a file block holds, in the patch's order.
pub enum Item {
    /// An action directive and the text lines in the gap after it.
    Action {
        line: Span,
        strays: Vec<Span>,
    },
    Rename {
        line: Span,
        value: Span,
    },
    Part(Part),
}

/// A value, an option or an unknown directive.
pub enum Part {
    Keyed { line: Span, value: Span },
    Opt { line: Span, strays: Vec<Span> },
    Unknown { line: Span, value: Span },
}
