//! Plain edge lists (`.edges`, `.el`, `.txt`).

use std::io::Write;
use std::path::Path;

use super::text::{decompress, push_u64, Cursor};
use crate::builder::{DuplicateEdges, GraphBuilder};
use crate::error::GraphError;
use crate::graph::TaskGraph;

/// Reads an edge list (gzip-compressed or plain, detected by the magic bytes).
///
/// Rules:
/// * One undirected edge per line: `u v` or `u v w`. Separators are spaces, tabs and commas
///   (any mix, repeated). Lines whose first non-blank character is `#` or `%` are comments;
///   blank lines are skipped. CRLF line ends and a missing final newline are fine.
/// * Task ids are 0-BASED; the number of tasks is the largest id plus one (tasks that appear
///   in no edge and lie above the largest id cannot be expressed). Ids must be below
///   `2^32 - 1`.
/// * The number of tasks may be at most `2·m + 2^24`, `m` the number of edge lines (an
///   edge list of `m` edges touches at most `2·m` tasks; the `2^24` allow sparse ids):
///   a larger id is an error at its line and column, so that a one-line file such as
///   `0 4000000000` cannot make the reader allocate gigabytes.
/// * The weight defaults to 1 and must be an integer `>= 1`.
/// * A self-loop `u u` is an error.
/// * A pair may appear twice only as `u v w` and `v u w` (both directions, same weight); the
///   two lines become one edge of weight `w`. Any other repetition (same direction twice,
///   different weights, three times) is an error naming both lines.
/// * All vertex weights are 1.
pub fn read_edge_list(bytes: &[u8], name: &Path) -> Result<TaskGraph, GraphError> {
    let data = decompress(bytes, name)?;
    parse(&data, name)
}

fn parse(b: &[u8], path: &Path) -> Result<TaskGraph, GraphError> {
    let mut c = Cursor::new(b, path);
    c.comma = true;
    let mut tail: Vec<u32> = Vec::new();
    let mut head: Vec<u32> = Vec::new();
    let mut weight: Vec<u64> = Vec::new();
    let mut line_off: Vec<usize> = Vec::new();
    let mut max_id: Option<u32> = None;
    let mut max_id_pos = 0usize; // byte offset of the first occurrence of the largest id
    let mut more = !b.is_empty();
    while more {
        let start = c.pos;
        if c.skip_blank_or_comment() {
            more = c.next_line();
            continue;
        }
        let mut id = |c: &mut Cursor<'_>, what: &str| -> Result<u32, GraphError> {
            let p = c.pos;
            let v = c.uint(what)?;
            if v >= u32::MAX as u64 {
                return Err(c.err(
                    p,
                    format!("{what} {v} is too large (at most {})", u32::MAX - 1),
                ));
            }
            c.skip_ws();
            let v = v as u32;
            if max_id.is_none_or(|m| v > m) {
                max_id = Some(v);
                max_id_pos = p;
            }
            Ok(v)
        };
        if looks_like_mpip(&c) {
            return Err(c.err(
                c.pos,
                "this is an mpiP graphStats file, not an edge list: name it *graphStats.txt or give --graph-format mpip",
            ));
        }
        let u = id(&mut c, "task id")?;
        let v_pos = c.pos;
        let v = id(&mut c, "second task id")?;
        let w = if c.at_eol() {
            1
        } else {
            c.uint_min("edge weight", 1)?
        };
        c.end_line("`u v [w]`")?;
        if u == v {
            return Err(c.err(v_pos, format!("self-loop {u}-{u}")));
        }
        tail.push(u);
        head.push(v);
        weight.push(w);
        line_off.push(start);
        more = c.next_line();
    }
    let n = max_id.map_or(0, |m| m as usize + 1);
    let limit = max_tasks(tail.len());
    if n as u64 > limit {
        return Err(c.err(
            max_id_pos,
            format!(
                "task id {} implies {n} tasks but the file has only {} edge(s) (at most 2·edges + 2^24 = {limit} tasks)",
                n - 1,
                tail.len()
            ),
        ));
    }
    let mut g = GraphBuilder::new(n, 1).with_duplicates(DuplicateEdges::MergeReverse);
    g.reserve_edges(tail.len());
    for i in 0..tail.len() {
        g.add_edge(tail[i], head[i], weight[i]);
    }
    g.try_build().map_err(|k| {
        let (i, j) = (k.first, k.second);
        let src = c.src();
        let li = src.line(line_off[i]);
        let msg = if tail[i] == tail[j] {
            format!(
                "edge {}-{} is listed again (first on line {li}); list a pair once, or once in each direction",
                tail[j], head[j]
            )
        } else if weight[i] != weight[j] {
            format!(
                "edge {}-{} has weight {} but {}-{} on line {li} has weight {}",
                tail[j], head[j], weight[j], tail[i], head[i], weight[i]
            )
        } else {
            format!(
                "edge {}-{} is listed more than twice (also on line {li})",
                tail[j], head[j]
            )
        };
        src.err(line_off[j], msg)
    })
}

/// Whether the cursor stands at the opening line of an mpiP graph section (dashes, then
/// `Graph Information`).
fn looks_like_mpip(c: &Cursor<'_>) -> bool {
    let rest = &c.b[c.pos..];
    let line = &rest[..rest.iter().position(|&x| x == b'\n').unwrap_or(rest.len())];
    line.starts_with(b"-")
        && line
            .windows(17)
            .any(|w| w.eq_ignore_ascii_case(b"Graph Information"))
}

/// The largest number of tasks an edge list of `m` edges may imply: `2·m + 2^24`.
fn max_tasks(m: usize) -> u64 {
    2 * m as u64 + (1 << 24)
}

/// Fails with [`std::io::ErrorKind::InvalidInput`] when `g` has vertex weights other than
/// one per task of 1, which `format` cannot hold.
pub(crate) fn check_plain_vertices(g: &TaskGraph, format: &str) -> std::io::Result<()> {
    if g.ncon() > 1 || g.has_vertex_weights() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{format} holds no vertex weights, and this graph has them (ncon = {}); write METIS or Scotch",
                g.ncon()
            ),
        ));
    }
    Ok(())
}

/// Writes `g` as an edge list: a `#` comment with n and m, then one line `u v` (or `u v w`
/// when some edge weight is not 1) per undirected edge with `u < v`, 0-based. Vertex weights
/// and a last task without edges are not representable: such graphs fail with
/// [`std::io::ErrorKind::InvalidInput`] rather than lose them.
pub fn write_edge_list(g: &TaskGraph, out: &mut impl Write) -> std::io::Result<()> {
    check_plain_vertices(g, "an edge list")?;
    // The task count is read back as the largest id plus one.
    let n = g.num_tasks();
    if n > 0 && g.degree(n as u32 - 1) == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "an edge list gives the task count by its largest id, and the last task ({}) has no edge: it would be lost (write METIS or Scotch)",
                n - 1
            ),
        ));
    }
    let ew_on = g.has_edge_weights();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    buf.extend_from_slice(b"# ");
    push_u64(&mut buf, g.num_tasks() as u64);
    buf.extend_from_slice(b" tasks, ");
    push_u64(&mut buf, g.num_edges() as u64);
    buf.extend_from_slice(b" edges, 0-based ids\n");
    for (u, v, w) in g.edges() {
        push_u64(&mut buf, u as u64);
        buf.push(b' ');
        push_u64(&mut buf, v as u64);
        if ew_on {
            buf.push(b' ');
            push_u64(&mut buf, w);
        }
        buf.push(b'\n');
        if buf.len() >= 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)
}
