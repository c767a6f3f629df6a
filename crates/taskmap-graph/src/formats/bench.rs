//! ISCAS-89 `.bench` gate-level netlists (ITC'99 benchmarks).

use std::collections::HashMap;
use std::path::Path;

use super::text::{decompress, Cursor};
use crate::builder::{DuplicateEdges, GraphBuilder};
use crate::error::GraphError;
use crate::graph::TaskGraph;

/// Reads an ISCAS-89 `.bench` netlist as a task graph (gzip-compressed or plain, detected by
/// the magic bytes). Same as [`read_bench_with_names`] without the names.
///
/// Rules:
/// * Statements, one per line: `INPUT(x)`, `OUTPUT(y)` (keywords case-insensitive) and
///   `z = TYPE(a, b, ...)`, where `TYPE` is any identifier (AND, NAND, OR, NOR, NOT, BUF,
///   XOR, XNOR, DFF, ...). White space may appear anywhere between symbols. `#` starts a
///   comment that runs to the end of the line; blank lines are skipped. A signal name is any
///   run of characters other than white space, `(`, `)`, `,`, `=` and `#`.
/// * Every defined signal `z = ...` (gate or flip-flop) is one task, numbered in file order.
///   Primary inputs are not tasks. `OUTPUT` lines create no task (they must name a defined
///   signal or an input).
/// * For every arc `a -> z` (signal `a` is an argument of the gate that defines `z`) where
///   both `a` and `z` are tasks, weight 1 is added to the undirected edge `{a, z}`: parallel
///   fan-in arcs and arcs in both directions add up. Arcs from primary inputs and self-arcs
///   (`z = DFF(z)`) are dropped.
/// * A signal defined twice (or defined and declared as input), or used but never defined,
///   is an error with line and column.
/// * All vertex weights are 1.
pub fn read_bench(bytes: &[u8], name: &Path) -> Result<TaskGraph, GraphError> {
    read_bench_with_names(bytes, name).map(|(g, _)| g)
}

#[derive(Clone, Copy)]
enum Signal {
    Input(usize),
    Task(u32, usize),
}

#[inline]
fn is_name_byte(c: u8) -> bool {
    !matches!(
        c,
        b' ' | b'\t' | b'\r' | b'\n' | b'(' | b')' | b',' | b'=' | b'#'
    )
}

/// Like [`read_bench`], and also returns the signal name of every task (index = task id).
pub fn read_bench_with_names(
    bytes: &[u8],
    name: &Path,
) -> Result<(TaskGraph, Vec<String>), GraphError> {
    let data = decompress(bytes, name)?;
    let b: &[u8] = &data;
    let mut c = Cursor::new(b, name);
    let mut net = Netlist {
        signals: HashMap::new(),
        task_names: Vec::new(),
        args: Vec::new(),
        arg_start: vec![0],
        outputs: Vec::new(),
    };
    let mut more = !b.is_empty();
    while more {
        c.skip_ws();
        if c.at_eol() || c.peek() == Some(b'#') {
            more = c.next_line();
            continue;
        }
        net.statement(&mut c)?;
        c.skip_ws();
        if !c.at_eol() && c.peek() != Some(b'#') {
            return Err(c.err(
                c.pos,
                format!("unexpected `{}` after the statement", c.token_text(c.pos)),
            ));
        }
        more = c.next_line();
    }
    net.build(&c)
}

/// What the cursor is at, for an error: `end of file`, `end of line` or the character.
fn found_here(c: &Cursor<'_>) -> String {
    match c.peek() {
        None => "end of file".to_string(),
        Some(b'\n') => "end of line".to_string(),
        Some(x) => format!("`{}`", x as char),
    }
}

/// Reads a signal name (or a keyword) after blanks; returns its byte range. `what` names
/// the expected thing in the error.
fn name_at(c: &mut Cursor<'_>, what: &str) -> Result<(usize, usize), GraphError> {
    c.skip_ws();
    let s = c.pos;
    while c.pos < c.b.len() && is_name_byte(c.b[c.pos]) {
        c.pos += 1;
    }
    if c.pos == s {
        return Err(c.err(s, format!("expected {what}, found {}", found_here(c))));
    }
    Ok((s, c.pos))
}

/// Reads the byte `ch` after blanks.
fn expect(c: &mut Cursor<'_>, ch: u8) -> Result<(), GraphError> {
    c.skip_ws();
    if c.peek() == Some(ch) {
        c.pos += 1;
        Ok(())
    } else {
        Err(c.err(
            c.pos,
            format!("expected `{}`, found {}", ch as char, found_here(c)),
        ))
    }
}

/// The statements of a netlist read so far, as byte ranges of the text.
struct Netlist<'b> {
    /// Every input and defined signal by name.
    signals: HashMap<&'b [u8], Signal>,
    /// The name of every task (a defined signal), in file order.
    task_names: Vec<(usize, usize)>,
    /// Arguments of all gates: gate `t` owns `args[arg_start[t]..arg_start[t + 1]]`.
    args: Vec<(usize, usize)>,
    /// Start of each gate's arguments in `args`, plus the end.
    arg_start: Vec<usize>,
    /// The signals named by `OUTPUT` lines.
    outputs: Vec<(usize, usize)>,
}

impl<'b> Netlist<'b> {
    /// Reads the statement at the cursor: `INPUT(x)`, `OUTPUT(y)` or `z = TYPE(a, ...)`.
    fn statement(&mut self, c: &mut Cursor<'b>) -> Result<(), GraphError> {
        let b = c.b;
        let first = name_at(c, "a signal name or INPUT/OUTPUT")?;
        c.skip_ws();
        match c.peek() {
            Some(b'(') => self.input_output(c, first),
            Some(b'=') => {
                c.pos += 1;
                self.gate(c, first)
            }
            _ => Err(c.err(
                c.pos,
                format!(
                    "expected `=` or `(` after `{}`",
                    String::from_utf8_lossy(&b[first.0..first.1])
                ),
            )),
        }
    }

    /// An `INPUT(x)` or `OUTPUT(y)` statement, its keyword at `first`, the cursor at `(`.
    fn input_output(
        &mut self,
        c: &mut Cursor<'b>,
        first: (usize, usize),
    ) -> Result<(), GraphError> {
        let b = c.b;
        let kw = &b[first.0..first.1];
        let is_in = kw.eq_ignore_ascii_case(b"INPUT");
        if !is_in && !kw.eq_ignore_ascii_case(b"OUTPUT") {
            return Err(c.err(
                first.0,
                format!(
                    "expected INPUT(..), OUTPUT(..) or `name = GATE(..)`, found `{}(`",
                    String::from_utf8_lossy(kw)
                ),
            ));
        }
        c.pos += 1;
        let sig = name_at(c, "a signal name")?;
        expect(c, b')')?;
        if is_in {
            let key = &b[sig.0..sig.1];
            if let Some(prev) = self.signals.get(key) {
                return Err(redefined(c, sig, key, *prev));
            }
            self.signals.insert(key, Signal::Input(sig.0));
        } else {
            self.outputs.push(sig);
        }
        Ok(())
    }

    /// A gate `z = TYPE(a, ...)`, the signal `z` at `first`, the cursor after `=`.
    fn gate(&mut self, c: &mut Cursor<'b>, first: (usize, usize)) -> Result<(), GraphError> {
        let key = &c.b[first.0..first.1];
        if let Some(prev) = self.signals.get(key) {
            return Err(redefined(c, first, key, *prev));
        }
        if self.task_names.len() >= u32::MAX as usize {
            return Err(c.err(first.0, "more than 2^32-1 gates"));
        }
        self.signals
            .insert(key, Signal::Task(self.task_names.len() as u32, first.0));
        self.task_names.push(first);
        name_at(c, "a gate type")?;
        expect(c, b'(')?;
        c.skip_ws();
        if c.peek() == Some(b')') {
            c.pos += 1;
        } else {
            loop {
                self.args.push(name_at(c, "a signal name")?);
                c.skip_ws();
                match c.peek() {
                    Some(b',') => c.pos += 1,
                    Some(b')') => {
                        c.pos += 1;
                        break;
                    }
                    _ => {
                        return Err(c.err(
                            c.pos,
                            format!("expected `,` or `)`, found {}", found_here(c)),
                        ));
                    }
                }
            }
        }
        self.arg_start.push(self.args.len());
        Ok(())
    }

    /// The graph and the task names, once every statement is read: every output and
    /// argument must name a signal.
    fn build(self, c: &Cursor<'b>) -> Result<(TaskGraph, Vec<String>), GraphError> {
        let b = c.b;
        let undefined = |(s, e): (usize, usize)| {
            c.err(
                s,
                format!(
                    "signal `{}` is never defined (no INPUT and no gate drives it)",
                    String::from_utf8_lossy(&b[s..e])
                ),
            )
        };
        for &o in &self.outputs {
            if !self.signals.contains_key(&b[o.0..o.1]) {
                return Err(undefined(o));
            }
        }
        let n = self.task_names.len();
        let mut g = GraphBuilder::new(n, 1).with_duplicates(DuplicateEdges::Sum);
        g.reserve_edges(self.args.len());
        for z in 0..n {
            for &a in &self.args[self.arg_start[z]..self.arg_start[z + 1]] {
                match self.signals.get(&b[a.0..a.1]) {
                    None => return Err(undefined(a)),
                    Some(Signal::Input(_)) => {}
                    Some(&Signal::Task(t, _)) => {
                        if t as usize != z {
                            g.add_edge(t, z as u32, 1);
                        }
                    }
                }
            }
        }
        let names = self
            .task_names
            .iter()
            .map(|&(s, e)| String::from_utf8_lossy(&b[s..e]).into_owned())
            .collect();
        Ok((g.build(), names))
    }
}

#[cold]
fn redefined(c: &Cursor<'_>, at: (usize, usize), key: &[u8], prev: Signal) -> GraphError {
    let (how, off) = match prev {
        Signal::Input(o) => ("declared as INPUT", o),
        Signal::Task(_, o) => ("defined", o),
    };
    let (l, col) = super::text::line_col(c.b, off);
    c.err(
        at.0,
        format!(
            "signal `{}` is defined again (already {how} at {l}:{col})",
            String::from_utf8_lossy(key)
        ),
    )
}
