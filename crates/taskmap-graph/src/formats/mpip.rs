//! Communication graphs of MPI runs as written by the `comm-patterns-clustering` scripts
//! from mpiP reports (`*graphStats.txt`).

use std::path::Path;

use super::text::{decompress, Cursor};
use crate::builder::{DuplicateEdges, GraphBuilder};
use crate::error::GraphError;
use crate::graph::TaskGraph;

/// The line that opens the edge section (its text between the dashes).
const START: &[u8] = b"Graph Information";
/// The line that closes it.
const END: &[u8] = b"Graph info end";

/// Whether the line `l` is a marker line holding `text`: dashes, then `text`.
fn is_marker(l: &[u8], text: &[u8]) -> bool {
    let t = l.trim_ascii();
    t.starts_with(b"-") && t.windows(text.len()).any(|w| w.eq_ignore_ascii_case(text))
}

/// Reads an mpiP communication graph (gzip-compressed or plain).
///
/// Rules:
/// * The edges are the lines between `--------------- Graph Information----------------`
///   and `----------------Graph info end -------------------` (the dashes may vary, the
///   words are case-insensitive); every other line (the statistics that follow) is
///   ignored. A file without the opening line, whose section is never closed (a
///   truncated file), or with a second section (two files joined) is an error, and so is
///   a file whose lines end in CR alone.
/// * One edge per line, `u , v = w`: ranks `u` and `v` 0-based, `w` the volume they
///   exchange (a decimal number, `38976.0` or `1e9`). Blank lines are skipped.
/// * Weight `max(1, round(w))`; a volume of 0 (as written: `-0` is, `1e-400` is not)
///   adds no edge; a negative, NaN or infinite volume is an error, and so are weights
///   that add up to 2^64 or more.
/// * A pair listed more than once (in either direction) gets the sum of its volumes.
///   A rank's volume to itself (`u , u = w`) does not depend on the mapping and is
///   dropped.
/// * The number of tasks is the largest rank plus one, at most `2·m + 2^24` for `m` edge
///   lines (as in edge lists); ranks above the largest that appears cannot be expressed.
/// * All vertex weights are 1.
pub fn read_mpip(bytes: &[u8], name: &Path) -> Result<TaskGraph, GraphError> {
    let data = decompress(bytes, name)?;
    parse(&data, name)
}

fn parse(b: &[u8], path: &Path) -> Result<TaskGraph, GraphError> {
    let mut c = Cursor::new(b, path);
    if !b.contains(&b'\n') && b.contains(&b'\r') {
        return Err(c.err(
            0,
            "the lines end in CR alone (classic Mac OS); taskmap reads LF or CRLF line ends",
        ));
    }
    // Find the opening marker.
    loop {
        if is_marker(line_at(b, c.pos), START) {
            break;
        }
        if !c.next_line() {
            return Err(c.err(
                0,
                "no `--- Graph Information ---` line: not a graphStats file of mpiP communication volumes",
            ));
        }
    }
    let start_pos = c.pos;
    let mut edges = MpipEdges {
        tail: Vec::new(),
        head: Vec::new(),
        weight: Vec::new(),
        total: 0,
        max_id: None,
        max_id_pos: 0,
        lines: 0,
    };
    loop {
        if !c.next_line() {
            return Err(c.err(
                start_pos,
                "the `Graph Information` section is never closed by a `--- Graph info end ---` line (is the file truncated?)",
            ));
        }
        if is_marker(line_at(b, c.pos), END) {
            break;
        }
        if is_marker(line_at(b, c.pos), START) {
            return Err(c.err(
                c.pos,
                "a `Graph Information` line inside the section (the one before is not closed)",
            ));
        }
        c.skip_ws();
        if c.at_eol() {
            continue;
        }
        edges.edge_line(&mut c)?;
    }
    // The statistics after the section are ignored, but a second section (two files
    // joined, as `cat a.gz b.gz` makes them) is not.
    while c.next_line() {
        if is_marker(line_at(b, c.pos), START) {
            return Err(c.err(
                c.pos,
                "a second `Graph Information` section (are two files joined?); a file holds one graph",
            ));
        }
    }
    edges.build(&c, start_pos)
}

/// The line of `b` that starts at byte `pos`, without its `\n`.
fn line_at(b: &[u8], pos: usize) -> &[u8] {
    let end = b[pos..]
        .iter()
        .position(|&x| x == b'\n')
        .map_or(b.len(), |e| pos + e);
    &b[pos..end]
}

/// Reads the symbol `sym` at the cursor and the blanks after it; `after` names what
/// precedes it in the error.
fn expect_symbol(c: &mut Cursor<'_>, sym: u8, after: &str) -> Result<(), GraphError> {
    if c.peek() != Some(sym) {
        let found = if c.at_eol() {
            "end of line".to_string()
        } else {
            format!("`{}`", c.token_text(c.pos))
        };
        return Err(c.err(
            c.pos,
            format!(
                "expected `{}` after {after} (an edge line is `u , v = volume`), found {found}",
                sym as char
            ),
        ));
    }
    c.pos += 1;
    c.skip_ws();
    Ok(())
}

/// The edge lines of the section read so far.
struct MpipEdges {
    /// First rank of each edge kept.
    tail: Vec<u32>,
    /// Second rank of each edge kept.
    head: Vec<u32>,
    /// Weight of each edge kept.
    weight: Vec<u64>,
    /// Sum of the weights.
    total: u64,
    /// The largest rank so far.
    max_id: Option<u32>,
    /// Where the largest rank is first written.
    max_id_pos: usize,
    /// Edge lines read, kept or not.
    lines: usize,
}

impl MpipEdges {
    /// Reads a rank at the cursor (`what` names it in errors) and the blanks after it.
    fn rank(&mut self, c: &mut Cursor<'_>, what: &str) -> Result<u32, GraphError> {
        // Digits up to any other character: `3,4=5` reads as well as `3 , 4 = 5`.
        let p = c.pos;
        let mut v: u64 = 0;
        while let Some(d) = c.peek().filter(u8::is_ascii_digit) {
            v = v * 10 + u64::from(d - b'0');
            if v >= u64::from(u32::MAX) {
                let digits = c.b[p..].iter().take_while(|x| x.is_ascii_digit()).count();
                return Err(c.err(
                    p,
                    format!(
                        "{what} {} is too large (at most {})",
                        String::from_utf8_lossy(&c.b[p..p + digits]),
                        u32::MAX - 1
                    ),
                ));
            }
            c.pos += 1;
        }
        if c.pos == p {
            let found = if c.at_eol() {
                "end of line".to_string()
            } else {
                format!("`{}`", c.token_text(p))
            };
            return Err(c.err(p, format!("expected {what} (an integer), found {found}")));
        }
        let v = v as u32;
        if self.max_id.is_none_or(|m| v > m) {
            self.max_id = Some(v);
            self.max_id_pos = p;
        }
        c.skip_ws();
        Ok(v)
    }

    /// Reads the edge line `u , v = w` at the cursor; keeps it unless its volume is 0 or
    /// it joins a rank to itself.
    fn edge_line(&mut self, c: &mut Cursor<'_>) -> Result<(), GraphError> {
        let u = self.rank(c, "rank")?;
        expect_symbol(c, b',', "the first rank")?;
        let v = self.rank(c, "second rank")?;
        expect_symbol(c, b'=', "the second rank")?;
        let w_pos = c.pos;
        let negative = c.peek() == Some(b'-');
        let w = c.real_weight("a volume (a number)")?;
        if negative && w != 0 {
            return Err(c.err(
                w_pos,
                format!("volume must not be negative, found {}", c.token_text(w_pos)),
            ));
        }
        c.end_line("`u , v = volume`")?;
        self.lines += 1;
        if w == 0 || u == v {
            return Ok(());
        }
        self.total = self.total.checked_add(w).ok_or_else(|| {
            c.err(
                w_pos,
                "the volumes add up to 2^64 or more (weights are rounded volumes, summed per pair)",
            )
        })?;
        self.tail.push(u);
        self.head.push(v);
        self.weight.push(w);
        Ok(())
    }

    /// The graph of the edges kept, with a task per rank up to the largest; `start_pos` is
    /// the opening line of the section.
    fn build(self, c: &Cursor<'_>, start_pos: usize) -> Result<TaskGraph, GraphError> {
        let Some(max_id) = self.max_id else {
            return Err(c.err(
                start_pos,
                "the `Graph Information` section holds no edge, so the number of ranks is unknown",
            ));
        };
        let n = max_id as usize + 1;
        let lines = self.lines;
        let limit = 2 * lines as u64 + (1 << 24);
        if n as u64 > limit {
            return Err(c.err(
                self.max_id_pos,
                format!(
                    "rank {max_id} implies {n} tasks but the section has only {lines} edge line(s) (at most 2·edges + 2^24 = {limit} tasks)"
                ),
            ));
        }
        let mut g = GraphBuilder::new(n, 1).with_duplicates(DuplicateEdges::Sum);
        g.reserve_edges(self.tail.len());
        for i in 0..self.tail.len() {
            g.add_edge(self.tail[i], self.head[i], self.weight[i]);
        }
        Ok(g.build())
    }
}
