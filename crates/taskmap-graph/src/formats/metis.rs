//! METIS / Chaco graph files (`.graph`, `.metis`, `.chaco`).

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;
use rayon::ThreadPool;

use super::text::{check_structure_on, decompress, defect_error, push_u64, row_of, Cursor};
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
/// Runs in O(size of file + n) for the bytes, then a structure check: O(m log Δ) binary
/// searches when every row is sorted, else an O(n + m) transposed pass.
pub fn read_metis(bytes: &[u8], name: &Path) -> Result<TaskGraph, GraphError> {
    read_metis_on(bytes, name, None)
}

/// [`read_metis`] on `pool`'s threads when the text after the header line (decompressed)
/// takes at least 1 MiB: the lines are parsed in pieces at once, and the structure is
/// checked on the threads (on a sorted copy of the rows when they are not sorted). The
/// graph, and the error on a bad file, are the same as [`read_metis`]'s.
pub fn read_metis_on(
    bytes: &[u8],
    name: &Path,
    pool: Option<&ThreadPool>,
) -> Result<TaskGraph, GraphError> {
    let data = decompress(bytes, name)?;
    parse(&data, name, pool, PARALLEL_BYTES)
}

/// Parses `b`; the lines in pieces on `pool` when the text after the header line takes
/// `parallel_bytes` or more.
fn parse(
    b: &[u8],
    path: &Path,
    pool: Option<&ThreadPool>,
    parallel_bytes: usize,
) -> Result<TaskGraph, GraphError> {
    let mut c = Cursor::new(b, path);
    let h = read_header(&mut c)?;
    let pool = pool.filter(|p| p.current_num_threads() > 1 && b.len() - c.pos >= parallel_bytes);
    let mut csr = match pool {
        Some(pool) => pool.install(|| read_body_parallel(&c, &h, pool.current_num_threads()))?,
        None => read_body(&mut c, &h)?,
    };
    if !h.has_ew {
        csr.ew = filled(csr.adjncy.len(), 1, pool);
    }
    if !h.has_vw {
        csr.vw = filled(h.n, 1, pool);
    }
    check_csr(&c, &h, &csr, pool)?;
    Ok(TaskGraph::from_csr_unchecked(
        csr.xadj, csr.adjncy, csr.ew, csr.vw, h.ncon,
    ))
}

/// Files with fewer bytes than this after the header line (comments and blank lines
/// included, after decompression) are read on one thread.
const PARALLEL_BYTES: usize = 1 << 20;

/// `len` copies of `x`, written on `pool`'s threads when there is one.
fn filled(len: usize, x: u64, pool: Option<&ThreadPool>) -> Vec<u64> {
    match pool {
        Some(pool) => {
            let mut v = vec![0u64; len];
            pool.install(|| v.par_chunks_mut(1 << 16).for_each(|c| c.fill(x)));
            v
        }
        None => vec![x; len],
    }
}

/// Reads the vertex lines after the header and what may follow them, one line after the
/// other.
fn read_body(c: &mut Cursor, h: &MetisHeader) -> Result<MetisCsr, GraphError> {
    let mut more = c.next_line();
    let mut csr = MetisCsr::with_capacity(h, c.b.len());
    while csr.xadj.len() <= h.n {
        if !more {
            return Err(too_few_lines(c, h, csr.xadj.len() - 1));
        }
        more = read_vertex_line(c, h, &mut csr)?;
    }
    while more {
        if let Some(p) = data_after_last_line(c) {
            return Err(c.err(p, data_after_message(h)));
        }
        more = c.next_line();
    }
    Ok(csr)
}

fn too_few_lines(c: &Cursor, h: &MetisHeader, read: usize) -> GraphError {
    c.err(
        h.n_pos,
        format!("expected {} vertex lines, file ended after {read}", h.n),
    )
}

fn data_after_message(h: &MetisHeader) -> String {
    format!("unexpected data after the last of the {} vertex lines", h.n)
}

/// On a line after the last vertex line: where it has data, if it is neither blank nor a
/// comment.
fn data_after_last_line(c: &mut Cursor) -> Option<usize> {
    c.skip_ws();
    (!c.at_eol() && c.peek() != Some(b'%')).then_some(c.pos)
}

/// [`read_body`] in pieces on the current rayon pool: the lines after the header are cut
/// into pieces of whole lines (four per thread); each piece counts its vertex lines (those
/// that are not comments), then, knowing the index of its first one, reads them into
/// arrays of its own (or checks that lines past the `n`-th are blank or comments); the
/// pieces are then copied into place. The first error in the file wins, as in [`read_body`].
fn read_body_parallel(c: &Cursor, h: &MetisHeader, threads: usize) -> Result<MetisCsr, GraphError> {
    let b = c.b;
    let Some(nl) = memchr::memchr(b'\n', &b[c.pos..]) else {
        return read_body(&mut c.clone(), h);
    };
    let start = c.pos + nl + 1;
    // Piece i holds the lines that start in [bounds[i], bounds[i + 1]); the last piece
    // also holds the final line after the last newline (empty when the file ends with one).
    let pieces = threads * 4;
    let mut bounds = vec![start];
    for i in 1..pieces {
        let at = (start + (b.len() - start) * i / pieces).max(*bounds.last().unwrap_or(&start));
        // A piece starts after a newline; the text after the last one is the last piece's.
        let Some(p) = memchr::memchr(b'\n', &b[at..]) else {
            break;
        };
        let next = at + p + 1;
        if next > *bounds.last().unwrap_or(&start) {
            bounds.push(next);
        }
    }
    let last = bounds.len() - 1;
    bounds.push(b.len());
    let lines = |i: usize| Lines {
        b,
        pos: bounds[i],
        end: bounds[i + 1],
        last: i == last,
    };
    let counts: Vec<usize> = (0..=last)
        .into_par_iter()
        .map(|i| lines(i).filter(|&p| !is_comment(b, p)).count())
        .collect();
    let mut first = Vec::with_capacity(counts.len());
    let mut total = 0usize;
    for &k in &counts {
        first.push(total);
        total += k;
    }
    let parts: Vec<Result<MetisCsr, GraphError>> = (0..=last)
        .into_par_iter()
        .map(|i| {
            let mut part = MetisCsr::for_piece(h, bounds[i + 1] - bounds[i], b.len() - start);
            let mut cur = c.clone();
            let mut index = first[i];
            for p in lines(i) {
                if is_comment(b, p) {
                    continue;
                }
                cur.pos = p;
                if index < h.n {
                    read_vertex_line(&mut cur, h, &mut part)?;
                } else if let Some(at) = data_after_last_line(&mut cur) {
                    return Err(cur.err(at, data_after_message(h)));
                }
                index += 1;
            }
            Ok(part)
        })
        .collect();
    let parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
    if total < h.n {
        return Err(too_few_lines(c, h, total));
    }
    Ok(MetisCsr::concat(parts))
}

/// The start of each line in a piece of a file (see [`read_body_parallel`]).
struct Lines<'a> {
    b: &'a [u8],
    pos: usize,
    end: usize,
    last: bool,
}

impl Iterator for Lines<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.pos > self.b.len() || (!self.last && self.pos >= self.end) {
            return None;
        }
        let p = self.pos;
        self.pos = memchr::memchr(b'\n', &self.b[p..]).map_or(self.b.len() + 1, |q| p + q + 1);
        Some(p)
    }
}

/// Whether the line at `p` is a comment: `%` after separators.
fn is_comment(b: &[u8], p: usize) -> bool {
    b[p..]
        .iter()
        .find(|&&x| !matches!(x, b' ' | b'\t' | b'\r'))
        .is_some_and(|&x| x == b'%')
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
        Self::sized(h, h.n, h.m.saturating_mul(2), len)
    }

    /// Empty arrays for a piece of `len` of the `body` bytes of vertex lines: sized for its
    /// share of the header's counts (a guess; the arrays grow if it is short).
    fn for_piece(h: &MetisHeader, len: usize, body: usize) -> Self {
        let share = |x: u64| (x as f64 * len as f64 / body.max(1) as f64 * 1.05) as u64 + 64;
        let rows = (share(h.n as u64) as usize).min(h.n);
        Self::sized(h, rows, share(h.m.saturating_mul(2)), len)
    }

    /// Empty arrays for `rows` vertex lines and `entries` neighbours, never beyond what
    /// `len` bytes can hold.
    fn sized(h: &MetisHeader, rows: usize, entries: u64, len: usize) -> Self {
        let cap_entries = (entries as usize).min(len / 2 + 1);
        let rows = rows.min(len + 1);
        let mut xadj: Vec<usize> = Vec::with_capacity(rows + 1);
        xadj.push(0);
        MetisCsr {
            xadj,
            line_off: Vec::with_capacity(rows),
            adjncy: Vec::with_capacity(cap_entries),
            ew: if h.has_ew {
                Vec::with_capacity(cap_entries)
            } else {
                Vec::new()
            },
            vw: if h.has_vw {
                Vec::with_capacity(rows.saturating_mul(h.ncon).min(len / 2 + 1))
            } else {
                Vec::new()
            },
        }
    }

    /// The pieces read by [`read_body_parallel`], in file order, as one: copied into place
    /// on the current rayon pool, each piece freed once copied.
    fn concat(parts: Vec<MetisCsr>) -> MetisCsr {
        let rows: usize = parts.iter().map(|p| p.line_off.len()).sum();
        let entries: usize = parts.iter().map(|p| p.adjncy.len()).sum();
        let mut all = MetisCsr {
            xadj: vec![0; rows + 1],
            line_off: vec![0; rows],
            adjncy: vec![0; entries],
            ew: vec![0; parts.iter().map(|p| p.ew.len()).sum()],
            vw: vec![0; parts.iter().map(|p| p.vw.len()).sum()],
        };
        let mut jobs = Vec::with_capacity(parts.len());
        let (mut x, mut l) = (&mut all.xadj[1..], &mut all.line_off[..]);
        let (mut a, mut e, mut w) = (&mut all.adjncy[..], &mut all.ew[..], &mut all.vw[..]);
        let mut base = 0;
        for p in parts {
            let (x0, x1) = std::mem::take(&mut x).split_at_mut(p.line_off.len());
            let (l0, l1) = std::mem::take(&mut l).split_at_mut(p.line_off.len());
            let (a0, a1) = std::mem::take(&mut a).split_at_mut(p.adjncy.len());
            let (e0, e1) = std::mem::take(&mut e).split_at_mut(p.ew.len());
            let (w0, w1) = std::mem::take(&mut w).split_at_mut(p.vw.len());
            (x, l, a, e, w) = (x1, l1, a1, e1, w1);
            let offset = base;
            base += p.adjncy.len();
            jobs.push((p, offset, x0, l0, a0, e0, w0));
        }
        jobs.into_par_iter().for_each(|(p, offset, x, l, a, e, w)| {
            for (d, &s) in x.iter_mut().zip(&p.xadj[1..]) {
                *d = s + offset;
            }
            l.copy_from_slice(&p.line_off);
            a.copy_from_slice(&p.adjncy);
            e.copy_from_slice(&p.ew);
            w.copy_from_slice(&p.vw);
        });
        all
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
fn check_csr(
    c: &Cursor,
    h: &MetisHeader,
    csr: &MetisCsr,
    pool: Option<&ThreadPool>,
) -> Result<(), GraphError> {
    let (xadj, adjncy, ew) = (&csr.xadj, &csr.adjncy, &csr.ew);
    if let Err(d) = check_structure_on(xadj, adjncy, ew, pool) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// A random METIS text: maybe vertex and edge weights, comments anywhere, CRLF line
    /// ends, rows shuffled or not, blank lines or none at the end.
    fn random_text(rng: &mut Xoshiro256PlusPlus) -> Vec<u8> {
        let n = rng.gen_range(1..60usize);
        let mut rows: Vec<Vec<(usize, u64)>> = vec![Vec::new(); n];
        for _ in 0..rng.gen_range(0..3 * n) {
            let (u, v) = (rng.gen_range(0..n), rng.gen_range(0..n));
            if u != v && !rows[u].iter().any(|&(x, _)| x == v) {
                let w = rng.gen_range(1..4);
                rows[u].push((v, w));
                rows[v].push((u, w));
            }
        }
        let (vw, ew) = (rng.gen_bool(0.3), rng.gen_bool(0.5));
        let m = rows.iter().map(Vec::len).sum::<usize>() / 2;
        let nl: &[u8] = if rng.gen_bool(0.2) { b"\r\n" } else { b"\n" };
        let mut t = format!("{n} {m} {}{}", u8::from(vw), u8::from(ew)).into_bytes();
        for (u, row) in rows.iter_mut().enumerate() {
            t.extend_from_slice(nl);
            if rng.gen_bool(0.1) {
                t.extend_from_slice(b" % a comment");
                t.extend_from_slice(nl);
            }
            if rng.gen_bool(0.5) {
                row.sort_unstable();
            }
            let mut words = Vec::new();
            if vw {
                words.push((u % 5).to_string());
            }
            for &(v, w) in row.iter() {
                words.push((v + 1).to_string());
                if ew {
                    words.push(w.to_string());
                }
            }
            t.extend_from_slice(words.join(" ").as_bytes());
        }
        for _ in 0..rng.gen_range(0..3) {
            t.extend_from_slice(nl);
        }
        t
    }

    fn pool(threads: usize) -> ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// The graph, or the error as printed.
    fn outcome(r: Result<TaskGraph, GraphError>) -> Result<TaskGraph, String> {
        r.map_err(|e| e.to_string())
    }

    #[test]
    fn pieces_read_what_one_pass_reads() {
        let pools = [pool(2), pool(3), pool(8)];
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let path = Path::new("g.graph");
        let (mut ok, mut errors) = (0, 0);
        for round in 0..3000 {
            let mut t = random_text(&mut rng);
            // Every other text gets a few bytes changed: broken files must fail alike.
            if round % 2 == 1 {
                for _ in 0..rng.gen_range(1..4) {
                    let i = rng.gen_range(0..t.len());
                    t[i] = b" \n%10x-\t\r9"[rng.gen_range(0..10)];
                }
            }
            let one = outcome(parse(&t, path, None, 0));
            for p in &pools {
                assert_eq!(
                    outcome(parse(&t, path, Some(p), 0)),
                    one,
                    "{}",
                    String::from_utf8_lossy(&t)
                );
            }
            if one.is_ok() {
                ok += 1
            } else {
                errors += 1
            }
        }
        assert!(ok > 1000 && errors > 500, "{ok} read, {errors} refused");
    }

    #[test]
    fn pieces_read_the_fixtures_alike() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures");
        let mut files = 0;
        for dir in [root.to_string(), format!("{root}/bad")] {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "graph") {
                    let b = std::fs::read(&path).unwrap();
                    let one = outcome(parse(&b, &path, None, 0));
                    assert_eq!(outcome(parse(&b, &path, Some(&pool(4)), 0)), one);
                    files += 1;
                }
            }
        }
        assert!(files >= 12, "{files} files");
    }
}
