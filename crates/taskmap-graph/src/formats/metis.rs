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
    let h = read_header(&mut c)?;
    let mut more = c.next_line();
    let mut csr = MetisCsr::with_capacity(&h, b.len());
    while csr.xadj.len() <= h.n {
        if !more {
            return Err(c.err(
                h.n_pos,
                format!(
                    "expected {} vertex lines, file ended after {}",
                    h.n,
                    csr.xadj.len() - 1
                ),
            ));
        }
        more = read_vertex_line(&mut c, &h, &mut csr)?;
    }
    while more {
        c.skip_ws();
        if !c.at_eol() && c.peek() != Some(b'%') {
            return Err(c.err(
                c.pos,
                format!("unexpected data after the last of the {} vertex lines", h.n),
            ));
        }
        more = c.next_line();
    }
    if !h.has_ew {
        csr.ew = vec![1; csr.adjncy.len()];
    }
    if !h.has_vw {
        csr.vw = vec![1; h.n];
    }
    check_csr(&c, &h, &csr)?;
    Ok(TaskGraph::from_csr_unchecked(
        csr.xadj, csr.adjncy, csr.ew, csr.vw, h.ncon,
    ))
}

/// The header line of a METIS file: sizes, their places and the format.
struct MetisHeader {
    /// Number of vertices.
    n: usize,
    /// Where `n` is written.
    n_pos: usize,
    /// Number of edges.
    m: u64,
    /// Where `m` is written.
    m_pos: usize,
    /// A vertex size precedes the weights.
    has_size: bool,
    /// `ncon` vertex weights start each vertex line.
    has_vw: bool,
    /// Every neighbour is followed by its edge weight.
    has_ew: bool,
    /// Vertex weights per vertex.
    ncon: usize,
}

/// Reads the header `n m [fmt [ncon]]`, the first line that is neither blank nor a
/// comment; the cursor stays on its line.
fn read_header(c: &mut Cursor) -> Result<MetisHeader, GraphError> {
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
    let mut h = MetisHeader {
        n,
        n_pos,
        m,
        m_pos,
        has_size: false,
        has_vw: false,
        has_ew: false,
        ncon: 1,
    };
    if !c.at_eol() {
        read_format(c, &mut h)?;
    }
    Ok(h)
}

/// Reads the `fmt [ncon]` part of the header into `h`.
fn read_format(c: &mut Cursor, h: &mut MetisHeader) -> Result<(), GraphError> {
    let b = c.b;
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
    h.has_ew = digit(0);
    h.has_vw = digit(1);
    h.has_size = digit(2);
    c.pos = end;
    c.skip_ws();
    if !c.at_eol() {
        let p = c.pos;
        let v = c.uint_min("ncon (number of vertex weights)", 1)?;
        if !h.has_vw {
            return Err(c.err(
                p,
                "ncon is given but the format has no vertex weights (middle digit 0)",
            ));
        }
        if v > 1 << 20 {
            return Err(c.err(p, format!("ncon {v} is too large")));
        }
        h.ncon = v as usize;
        c.end_line("the header `n m fmt ncon`")?;
    }
    Ok(())
}

/// The graph as read so far, in CSR form, with the offset of each vertex line.
struct MetisCsr {
    /// Start of each vertex's neighbours in `adjncy`, plus the end.
    xadj: Vec<usize>,
    /// Byte offset of each vertex line.
    line_off: Vec<usize>,
    /// 0-based neighbour ids.
    adjncy: Vec<u32>,
    /// Edge weights, when the format has them.
    ew: Vec<u64>,
    /// Vertex weights, `ncon` per vertex, when the format has them.
    vw: Vec<u64>,
}

impl MetisCsr {
    /// Empty arrays, sized for the header `h` but never beyond what a file of `len` bytes
    /// can hold.
    fn with_capacity(h: &MetisHeader, len: usize) -> Self {
        let n = h.n;
        let cap_entries = (h.m.saturating_mul(2) as usize).min(len / 2 + 1);
        let mut xadj: Vec<usize> = Vec::with_capacity(n.min(len + 1) + 1);
        xadj.push(0);
        MetisCsr {
            xadj,
            line_off: Vec::with_capacity(n.min(len + 1)),
            adjncy: Vec::with_capacity(cap_entries),
            ew: if h.has_ew {
                Vec::with_capacity(cap_entries)
            } else {
                Vec::new()
            },
            vw: if h.has_vw {
                Vec::with_capacity(n.min(len + 1) * h.ncon)
            } else {
                Vec::new()
            },
        }
    }
}

/// Reads the line at the cursor, a vertex line or a comment, and moves to the next line;
/// returns whether there is one.
#[inline]
fn read_vertex_line(
    c: &mut Cursor,
    h: &MetisHeader,
    csr: &mut MetisCsr,
) -> Result<bool, GraphError> {
    let start = c.pos;
    c.skip_ws();
    if c.peek() == Some(b'%') {
        return Ok(c.next_line());
    }
    if h.has_size {
        c.uint("vertex size")?;
        c.skip_ws();
    }
    if h.has_vw {
        for _ in 0..h.ncon {
            let w = c.uint("vertex weight")?;
            csr.vw.push(w);
            c.skip_ws();
        }
    }
    c.pos = fast_neighbours(c.b, c.pos, h, csr);
    let n64 = h.n as u64;
    while !c.at_eol() {
        let p = c.pos;
        let v = c.uint("neighbour id")?;
        if v == 0 || v > n64 {
            let note = if v > u32::MAX as u64 {
                " (does not fit in 32 bits)"
            } else {
                ""
            };
            return Err(c.err(p, format!("neighbour {v} out of range 1..={}{note}", h.n)));
        }
        csr.adjncy.push((v - 1) as u32);
        c.skip_ws();
        if h.has_ew {
            if c.at_eol() {
                return Err(c.err(c.pos, format!("neighbour {v} has no edge weight")));
            }
            csr.ew.push(c.uint_min("edge weight", 1)?);
            c.skip_ws();
        }
    }
    csr.xadj.push(csr.adjncy.len());
    csr.line_off.push(start);
    Ok(c.next_line())
}

/// Fast path of a vertex line from byte `i`: plain decimal ids and weights separated by
/// blanks. Returns where it stopped; anything unusual is left to the checked cursor
/// methods, which produce the error.
#[inline]
fn fast_neighbours(b: &[u8], mut i: usize, h: &MetisHeader, csr: &mut MetisCsr) -> usize {
    let n64 = h.n as u64;
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
        if h.has_ew {
            let mut k = j;
            while k < b.len() && matches!(b[k], b' ' | b'\t' | b'\r') {
                k += 1;
            }
            match fast_uint(b, k) {
                Some((w, k2)) if w >= 1 => {
                    csr.ew.push(w);
                    i = k2;
                }
                _ => break,
            }
        } else {
            i = j;
        }
        csr.adjncy.push((v - 1) as u32);
    }
    i
}

/// Checks the structure of the graph read (no self-loop, no repeat, every edge with its
/// reverse of the same weight) and the edge count of the header.
fn check_csr(c: &Cursor, h: &MetisHeader, csr: &MetisCsr) -> Result<(), GraphError> {
    let (xadj, adjncy, ew) = (&csr.xadj, &csr.adjncy, &csr.ew);
    if let Err(d) = check_structure(xadj, adjncy, ew) {
        let pre = usize::from(h.has_size) + if h.has_vw { h.ncon } else { 0 };
        let stride = 1 + usize::from(h.has_ew);
        let place = |e: usize| {
            let u = row_of(xadj, e);
            c.nth_token(csr.line_off[u], pre + (e - xadj[u]) * stride)
        };
        return Err(defect_error(
            &c.src(),
            d,
            xadj,
            adjncy,
            ew,
            &|x| x as u64 + 1,
            &place,
        ));
    }
    let m = h.m;
    if adjncy.len() as u64 != m.saturating_mul(2) {
        return Err(c.err(
            h.m_pos,
            format!(
                "header says {m} edges ({} adjacency entries) but the vertex lines list {} entries",
                m.saturating_mul(2),
                adjncy.len()
            ),
        ));
    }
    Ok(())
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
