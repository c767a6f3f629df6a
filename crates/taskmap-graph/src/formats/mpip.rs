//! Communication graphs of MPI runs as written by the `comm-patterns-clustering` scripts
//! from mpiP reports (`*graphStats.txt`).

use std::path::Path;

use super::text::{decompress, Cursor};
use super::volumes::Volumes;
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
    let mut edges = Volumes::default();
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
        edge_line(&mut edges, &mut c)?;
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
    edges.build(
        &c,
        start_pos,
        "the `Graph Information` section holds no edge, so the number of ranks is unknown",
    )
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

/// Reads the edge line `u , v = w` at the cursor into `edges`.
fn edge_line(edges: &mut Volumes, c: &mut Cursor<'_>) -> Result<(), GraphError> {
    let u = edges.rank(c, "rank")?;
    expect_symbol(c, b',', "the first rank")?;
    let v = edges.rank(c, "second rank")?;
    expect_symbol(c, b'=', "the second rank")?;
    let (w, w_pos) = edges.volume(c)?;
    c.end_line("`u , v = volume`")?;
    edges.add(c, u, v, w, w_pos)
}
