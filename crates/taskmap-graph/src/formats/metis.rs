//! METIS / Chaco graph files (`.graph`, `.metis`, `.chaco`).

use std::io::Write;
use std::path::Path;

use super::text::{check_structure, decompress, defect_error, push_u64, row_of, Cursor};
use crate::error::GraphError;
use crate::graph::TaskGraph;

/// Reads a METIS / Chaco graph file (gzip-compressed or plain, detected by the magic bytes).
///
/// Rules:
/// * Lines end with `\n` or `\r\n`. The text after the last `\n` is a line too, even when it
///   is empty: a file may lack its final newline, and in `"...\n"` the empty final line can
///   stand for the last vertex when it has no neighbours. (So a file whose last vertex is
///   isolated may end either with its empty line plus `\n`, or right after the previous
///   vertex line's `\n`.)
/// * A comment line has `%` as its first non-blank character; it may appear anywhere and is
///   not counted. Blank lines before the header are skipped.
/// * Header: `n m [fmt [ncon]]`. `fmt` has at most 3 binary digits `abc` read right-aligned
///   (`1` = `001`): `a` = a vertex size precedes the weights (read and ignored), `b` = `ncon`
///   vertex weights follow (default `ncon` 1), `c` = every neighbour is followed by its edge
///   weight. `ncon` without `b` is an error. `n` must fit in 32 bits.
/// * Then exactly `n` vertex lines `[size] [w_1 .. w_ncon] v_1 [ew_1] v_2 [ew_2] ...`. An
///   EMPTY (or blank) line is a vertex without neighbours. Separators are spaces and tabs.
/// * Neighbour ids are 1-based, in `1..=n`; larger values (also ones that overflow 32 bits)
///   are errors. Vertex weights are integers `>= 0`; edge weights are integers `>= 1`
///   (0 or negative is an error). Without `b` all vertex weights are 1, without `c` all edge
///   weights are 1.
/// * Fewer than `n` vertex lines is an error (`expected n vertex lines, file ended after k`);
///   after the `n`-th vertex line only blank and comment lines may follow.
/// * Self-loops, a neighbour listed twice, an edge without its reverse, and reverse edges
///   with different weights are errors that name the line and column (and the line of the
///   other end). Then the number of adjacency entries must be exactly `2m` (error:
///   `header says m edges (2m adjacency entries) but the vertex lines list k entries`).
///
/// Runs in O(size of file + n); one pass over the bytes, then an O(n + m) structure check.
pub fn read_metis(bytes: &[u8], name: &Path) -> Result<TaskGraph, GraphError> {
    let data = decompress(bytes, name)?;
    parse(&data, name)
}

fn parse(b: &[u8], path: &Path) -> Result<TaskGraph, GraphError> {
    let mut c = Cursor::new(b, path);
    // Header: first line that is neither blank nor a comment.
    loop {
        c.skip_ws();
        if c.at_eof() {
            return Err(c.err(c.pos, "no header line (expected `n m [fmt [ncon]]`)"));
        }
        if c.peek() == Some(b'%') || c.at_eol() {
            c.next_line();
            continue;
        }
        break;
    }
    let n_pos = c.pos;
    let n = c.uint("number of vertices")?;
    if n > u32::MAX as u64 {
        return Err(c.err(n_pos, format!("{n} vertices do not fit in 32-bit ids")));
    }
    let n = n as usize;
    c.skip_ws();
    let m_pos = c.pos;
    let m = c.uint("number of edges")?;
    c.skip_ws();
    let (mut has_size, mut has_vw, mut has_ew, mut ncon) = (false, false, false, 1usize);
    if !c.at_eol() {
        let f = c.pos;
        let end = c.token_end(f);
        let tok = &b[f..end];
        if tok.is_empty() || tok.len() > 3 || tok.iter().any(|&d| d != b'0' && d != b'1') {
            return Err(c.err(
                f,
                format!(
                    "format `{}` must be at most 3 binary digits (size, vertex weights, edge weights)",
                    c.token_text(f)
                ),
            ));
        }
        let digit = |k: usize| tok.len() > k && tok[tok.len() - 1 - k] == b'1';
        has_ew = digit(0);
        has_vw = digit(1);
        has_size = digit(2);
        c.pos = end;
        c.skip_ws();
        if !c.at_eol() {
            let p = c.pos;
            let v = c.uint_min("ncon (number of vertex weights)", 1)?;
            if !has_vw {
                return Err(c.err(
                    p,
                    "ncon is given but the format has no vertex weights (middle digit 0)",
                ));
            }
            if v > 1 << 20 {
                return Err(c.err(p, format!("ncon {v} is too large")));
            }
            ncon = v as usize;
            c.end_line("the header `n m fmt ncon`")?;
        }
    }
    let mut more = c.next_line();

    let cap_entries = (m.saturating_mul(2) as usize).min(b.len() / 2 + 1);
    let mut xadj: Vec<usize> = Vec::with_capacity(n.min(b.len() + 1) + 1);
    let mut line_off: Vec<usize> = Vec::with_capacity(n.min(b.len() + 1));
    let mut adjncy: Vec<u32> = Vec::with_capacity(cap_entries);
    let mut ew: Vec<u64> = if has_ew {
        Vec::with_capacity(cap_entries)
    } else {
        Vec::new()
    };
    let mut vw: Vec<u64> = if has_vw {
        Vec::with_capacity(n.min(b.len() + 1) * ncon)
    } else {
        Vec::new()
    };
    xadj.push(0);
    let n64 = n as u64;
    while xadj.len() <= n {
        if !more {
            return Err(c.err(
                n_pos,
                format!(
                    "expected {n} vertex lines, file ended after {}",
                    xadj.len() - 1
                ),
            ));
        }
        let start = c.pos;
        c.skip_ws();
        if c.peek() == Some(b'%') {
            more = c.next_line();
            continue;
        }
        if has_size {
            c.uint("vertex size")?;
            c.skip_ws();
        }
        if has_vw {
            for _ in 0..ncon {
                let w = c.uint("vertex weight")?;
                vw.push(w);
                c.skip_ws();
            }
        }
        // Fast path: plain decimal ids and weights separated by blanks; anything unusual
        // falls through to the checked cursor methods below, which produce the error.
        let mut i = c.pos;
        loop {
            while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r') {
                i += 1;
            }
            if i >= b.len() || b[i] == b'\n' {
                break;
            }
            let Some((v, j)) = fast_uint(b, i) else { break };
            if v == 0 || v > n64 {
                break;
            }
            if has_ew {
                let mut k = j;
                while k < b.len() && matches!(b[k], b' ' | b'\t' | b'\r') {
                    k += 1;
                }
                match fast_uint(b, k) {
                    Some((w, k2)) if w >= 1 => {
                        ew.push(w);
                        i = k2;
                    }
                    _ => break,
                }
            } else {
                i = j;
            }
            adjncy.push((v - 1) as u32);
        }
        c.pos = i;
        while !c.at_eol() {
            let p = c.pos;
            let v = c.uint("neighbour id")?;
            if v == 0 || v > n64 {
                let note = if v > u32::MAX as u64 {
                    " (does not fit in 32 bits)"
                } else {
                    ""
                };
                return Err(c.err(p, format!("neighbour {v} out of range 1..={n}{note}")));
            }
            adjncy.push((v - 1) as u32);
            c.skip_ws();
            if has_ew {
                if c.at_eol() {
                    return Err(c.err(c.pos, format!("neighbour {v} has no edge weight")));
                }
                ew.push(c.uint_min("edge weight", 1)?);
                c.skip_ws();
            }
        }
        xadj.push(adjncy.len());
        line_off.push(start);
        more = c.next_line();
    }
    while more {
        c.skip_ws();
        if !c.at_eol() && c.peek() != Some(b'%') {
            return Err(c.err(
                c.pos,
                format!("unexpected data after the last of the {n} vertex lines"),
            ));
        }
        more = c.next_line();
    }
    if !has_ew {
        ew = vec![1; adjncy.len()];
    }
    if !has_vw {
        vw = vec![1; n];
    }
    if let Err(d) = check_structure(&xadj, &adjncy, &ew) {
        let pre = usize::from(has_size) + if has_vw { ncon } else { 0 };
        let stride = 1 + usize::from(has_ew);
        let place = |e: usize| {
            let u = row_of(&xadj, e);
            c.nth_token(line_off[u], pre + (e - xadj[u]) * stride)
        };
        return Err(defect_error(
            &c.src(),
            d,
            &xadj,
            &adjncy,
            &ew,
            &|x| x as u64 + 1,
            &place,
        ));
    }
    if adjncy.len() as u64 != m.saturating_mul(2) {
        return Err(c.err(
            m_pos,
            format!(
                "header says {m} edges ({} adjacency entries) but the vertex lines list {} entries",
                m.saturating_mul(2),
                adjncy.len()
            ),
        ));
    }
    Ok(TaskGraph::from_csr_unchecked(xadj, adjncy, ew, vw, ncon))
}

/// Writes `g` in METIS format: header `n m` plus `fmt` only when needed (`1` edge weights,
/// `10` vertex weights, `11` both, followed by `ncon` when it is above 1), then one line per
/// task with 1-based neighbour ids. [`read_metis`] reads it back to an equal graph.
pub fn write_metis(g: &TaskGraph, out: &mut impl Write) -> std::io::Result<()> {
    let ew_on = g.has_edge_weights();
    let vw_on = g.has_vertex_weights();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    push_u64(&mut buf, g.num_tasks() as u64);
    buf.push(b' ');
    push_u64(&mut buf, g.num_edges() as u64);
    match (vw_on, ew_on) {
        (false, false) => {}
        (false, true) => buf.extend_from_slice(b" 1"),
        (true, false) => buf.extend_from_slice(b" 10"),
        (true, true) => buf.extend_from_slice(b" 11"),
    }
    if g.ncon() > 1 {
        buf.push(b' ');
        push_u64(&mut buf, g.ncon() as u64);
    }
    buf.push(b'\n');
    for u in 0..g.num_tasks() as u32 {
        let mut first = true;
        if vw_on {
            for &w in g.vertex_weights(u) {
                if !first {
                    buf.push(b' ');
                }
                first = false;
                push_u64(&mut buf, w);
            }
        }
        for (&v, &w) in g.neighbors(u).iter().zip(g.edge_weights(u)) {
            if !first {
                buf.push(b' ');
            }
            first = false;
            push_u64(&mut buf, v as u64 + 1);
            if ew_on {
                buf.push(b' ');
                push_u64(&mut buf, w);
            }
        }
        buf.push(b'\n');
        if buf.len() >= 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)
}

/// Parses a decimal integer of at most 18 digits at `i` that is followed by a blank, a line
/// end or the end of the file. `None` for anything else (the caller then takes the slow path
/// that reports the problem).
#[inline(always)]
fn fast_uint(b: &[u8], i: usize) -> Option<(u64, usize)> {
    let mut j = i;
    let mut v: u64 = 0;
    while j < b.len() {
        let d = b[j].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v * 10 + d as u64;
        j += 1;
        if j - i > 18 {
            return None;
        }
    }
    if j == i || (j < b.len() && !matches!(b[j], b' ' | b'\t' | b'\r' | b'\n')) {
        return None;
    }
    Some((v, j))
}
