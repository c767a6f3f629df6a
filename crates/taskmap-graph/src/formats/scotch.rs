//! Scotch source graph files (`.grf`, `.src`).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use super::text::{check_structure_on, decompress, defect_error, push_u64, row_of, Cursor};
use crate::error::GraphError;
use crate::graph::TaskGraph;

/// Reads a Scotch source graph file (gzip-compressed or plain, detected by the magic bytes).
///
/// Rules (Scotch's `graphLoad`): the file is a stream of integers separated by any white
/// space, so tokens may be spread freely over lines; errors still give line and column.
/// * `0` (the format version; anything else is an error),
/// * `n arcs` (arcs = 2m, the number of adjacency entries),
/// * `baseval flags`: `baseval` is the number of the first vertex (usually 0 or 1); `flags`
///   is an integer `000`..`111` whose digits mean, from left to right: vertex labels, edge
///   loads, vertex loads (so `10` = `010` = edge loads only, `1` = vertex loads only),
/// * then for each vertex `[label] [vertex load] degree` followed by `degree` times
///   `[edge load] neighbour`.
///
/// Without labels a neighbour is a vertex number in `baseval..baseval+n`. With labels,
/// every vertex carries a distinct non-negative label, neighbours are given by label, and
/// tasks are numbered in file order. Vertex loads are integers `>= 0` (default 1), edge
/// loads integers `>= 1` (default 1). The degrees must add up to `arcs`; self-loops, repeated
/// neighbours, missing reverse arcs and reverse arcs with different loads are errors. After
/// the last vertex only white space may follow. Only one vertex load per task (ncon 1).
pub fn read_scotch(bytes: &[u8], name: &Path) -> Result<TaskGraph, GraphError> {
    let data = decompress(bytes, name)?;
    parse(&data, name)
}

fn parse(b: &[u8], path: &Path) -> Result<TaskGraph, GraphError> {
    let mut c = Cursor::new(b, path);
    let h = read_header(&mut c)?;
    let cap_n = h.n.min(b.len() + 1);
    let cap_e = (h.arcs as usize).min(b.len() / 2 + 1);
    let mut xadj: Vec<usize> = Vec::with_capacity(cap_n + 1);
    xadj.push(0);
    let mut csr = ScotchCsr {
        xadj,
        rec_off: Vec::with_capacity(cap_n),
        labels: Vec::new(),
        raw: Vec::new(),
        adjncy: Vec::with_capacity(if h.has_label { 0 } else { cap_e }),
        ew: Vec::with_capacity(if h.has_el { cap_e } else { 0 }),
        vw: Vec::with_capacity(if h.has_vl { cap_n } else { 0 }),
        entries: 0,
    };
    for _ in 0..h.n {
        read_vertex(&mut c, &h, &mut csr)?;
    }
    c.skip_ws_nl();
    if !c.at_eof() {
        return Err(c.err(
            c.pos,
            format!("unexpected data after the last of the {} vertices", h.n),
        ));
    }
    if csr.entries != h.arcs {
        return Err(c.err(
            h.arcs_pos,
            format!(
                "header says {} arcs but the degrees add up to {}",
                h.arcs, csr.entries
            ),
        ));
    }
    if h.has_label {
        resolve_labels(&c, &h, &mut csr)?;
    }
    if !h.has_el {
        csr.ew = vec![1; csr.adjncy.len()];
    }
    if !h.has_vl {
        csr.vw = vec![1; h.n];
    }
    if let Err(d) = check_structure_on(&csr.xadj, &csr.adjncy, &csr.ew, None) {
        let id = |x: usize| {
            if h.has_label {
                csr.labels[x]
            } else {
                x as u64 + h.baseval
            }
        };
        return Err(defect_error(
            &c.src(),
            d,
            &csr.xadj,
            &csr.adjncy,
            &csr.ew,
            &id,
            &|e| h.place(&c, &csr, e),
        ));
    }
    Ok(TaskGraph::from_csr_unchecked(
        csr.xadj, csr.adjncy, csr.ew, csr.vw, 1,
    ))
}

/// The header of a Scotch graph: sizes, base value and properties.
struct ScotchHeader {
    /// Number of vertices.
    n: usize,
    /// Number of arcs (adjacency entries).
    arcs: u64,
    /// Where `arcs` is written.
    arcs_pos: usize,
    /// Number of the first vertex.
    baseval: u64,
    /// Every vertex has a label, and neighbours are given by label.
    has_label: bool,
    /// Every neighbour is preceded by its edge load.
    has_el: bool,
    /// Every vertex has a load.
    has_vl: bool,
}

impl ScotchHeader {
    /// Byte offset of the neighbour of adjacency entry `e`.
    fn place(&self, c: &Cursor<'_>, csr: &ScotchCsr, e: usize) -> usize {
        let pre = usize::from(self.has_label) + usize::from(self.has_vl) + 1;
        let stride = 1 + usize::from(self.has_el);
        let nb = usize::from(self.has_el);
        let u = row_of(&csr.xadj, e);
        c.nth_token(csr.rec_off[u], pre + (e - csr.xadj[u]) * stride + nb)
    }
}

/// Reads the header `0 n arcs baseval flags`.
fn read_header(c: &mut Cursor<'_>) -> Result<ScotchHeader, GraphError> {
    c.skip_ws_nl();
    let p = c.pos;
    let version = c.uint("format version")?;
    if version != 0 {
        return Err(c.err(
            p,
            format!("Scotch graph format version {version} is not supported (expected 0)"),
        ));
    }
    c.skip_ws_nl();
    let n_pos = c.pos;
    let n = c.uint("number of vertices")?;
    if n > u32::MAX as u64 {
        return Err(c.err(n_pos, format!("{n} vertices do not fit in 32-bit ids")));
    }
    let n = n as usize;
    c.skip_ws_nl();
    let arcs_pos = c.pos;
    let arcs = c.uint("number of arcs")?;
    c.skip_ws_nl();
    let b_pos = c.pos;
    let baseval = c.uint("base value")?;
    if baseval > u64::from(u32::MAX) {
        // Vertex numbers baseval..baseval+n must stay printable and comparable.
        return Err(c.err(
            b_pos,
            format!("base value {baseval} is too large (usually 0 or 1; at most 2^32-1)"),
        ));
    }
    c.skip_ws_nl();
    let f_pos = c.pos;
    let flags = c.uint("property flags")?;
    if flags > 111 || (flags / 10) % 10 > 1 || flags % 10 > 1 {
        return Err(c.err(
            f_pos,
            format!("property flags `{}` must be 000..111 with binary digits (labels, edge loads, vertex loads)", c.token_text(f_pos)),
        ));
    }
    Ok(ScotchHeader {
        n,
        arcs,
        arcs_pos,
        baseval,
        has_label: flags / 100 == 1,
        has_el: (flags / 10) % 10 == 1,
        has_vl: flags % 10 == 1,
    })
}

/// The graph as read so far, in CSR form, with the offset of each vertex record.
struct ScotchCsr {
    /// Start of each vertex's neighbours, plus the end.
    xadj: Vec<usize>,
    /// Byte offset of each vertex record.
    rec_off: Vec<usize>,
    /// The label of each vertex, when the graph has labels.
    labels: Vec<u64>,
    /// The neighbours as labels, when the graph has labels.
    raw: Vec<u64>,
    /// 0-based neighbour ids (with labels: once they are resolved).
    adjncy: Vec<u32>,
    /// Edge loads, when the graph has them.
    ew: Vec<u64>,
    /// Vertex loads, when the graph has them.
    vw: Vec<u64>,
    /// Adjacency entries so far.
    entries: u64,
}

/// Reads the record `[label] [vertex load] degree` and its neighbours of the next vertex.
#[inline]
fn read_vertex(
    c: &mut Cursor<'_>,
    h: &ScotchHeader,
    csr: &mut ScotchCsr,
) -> Result<(), GraphError> {
    let (lo, hi) = (h.baseval, h.baseval.saturating_add(h.n as u64));
    c.skip_ws_nl();
    csr.rec_off.push(c.pos);
    if h.has_label {
        csr.labels.push(c.uint("vertex label")?);
        c.skip_ws_nl();
    }
    if h.has_vl {
        csr.vw.push(c.uint("vertex load")?);
        c.skip_ws_nl();
    }
    let d_pos = c.pos;
    let deg = c.uint("degree")?;
    let (arcs, entries) = (h.arcs, csr.entries);
    if entries.saturating_add(deg) > arcs {
        return Err(c.err(
            d_pos,
            format!(
                "degree {deg} of vertex {} exceeds the {arcs} arcs announced in the header ({entries} used so far)",
                csr.xadj.len() - 1 + h.baseval as usize
            ),
        ));
    }
    csr.entries += deg;
    for _ in 0..deg {
        c.skip_ws_nl();
        if h.has_el {
            csr.ew.push(c.uint_min("edge load", 1)?);
            c.skip_ws_nl();
        }
        let p = c.pos;
        let v = c.uint("neighbour")?;
        if h.has_label {
            csr.raw.push(v);
        } else {
            if v < lo || v >= hi {
                return Err(c.err(
                    p,
                    format!("neighbour {v} out of range {lo}..={}", hi as i128 - 1),
                ));
            }
            csr.adjncy.push((v - lo) as u32);
        }
    }
    csr.xadj.push(if h.has_label {
        csr.raw.len()
    } else {
        csr.adjncy.len()
    });
    Ok(())
}

/// Turns the neighbour labels into vertex numbers; the labels must be distinct and every
/// neighbour's label must be one.
fn resolve_labels(c: &Cursor<'_>, h: &ScotchHeader, csr: &mut ScotchCsr) -> Result<(), GraphError> {
    let mut index: HashMap<u64, u32> = HashMap::with_capacity(h.n);
    for (u, &l) in csr.labels.iter().enumerate() {
        if let Some(&first) = index.get(&l) {
            let fl = c.src().line(csr.rec_off[first as usize]);
            return Err(c.err(
                csr.rec_off[u],
                format!("vertex label {l} is used twice (first on line {fl})"),
            ));
        }
        index.insert(l, u as u32);
    }
    let mut adjncy = Vec::with_capacity(csr.raw.len());
    for (e, &l) in csr.raw.iter().enumerate() {
        match index.get(&l) {
            Some(&v) => adjncy.push(v),
            None => {
                return Err(c.err(h.place(c, csr, e), format!("no vertex has label {l}")));
            }
        }
    }
    csr.adjncy = adjncy;
    Ok(())
}

/// Writes `g` as a Scotch source graph (the input of Scotch's `gmap` and `gmtst`): version
/// `0`, `n 2m`, base value 0 and flags `0el` (edge loads `e` only if some edge weight is not
/// 1, vertex loads `l` only if some vertex weight is not 1), no labels, then one line per
/// vertex `[load] degree [edge load] neighbour ...`, tab-separated like Scotch's own writer.
///
/// Fails with [`std::io::ErrorKind::InvalidInput`] if `ncon > 1` (Scotch has one load).
pub fn write_scotch(g: &TaskGraph, out: &mut impl Write) -> std::io::Result<()> {
    if g.ncon() > 1 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "Scotch graphs hold one vertex load per vertex, this graph has ncon = {}",
                g.ncon()
            ),
        ));
    }
    let ew_on = g.has_edge_weights();
    let vw_on = g.has_vertex_weights();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    buf.extend_from_slice(b"0\n");
    push_u64(&mut buf, g.num_tasks() as u64);
    buf.push(b'\t');
    push_u64(&mut buf, 2 * g.num_edges() as u64);
    buf.extend_from_slice(b"\n0\t0");
    buf.push(if ew_on { b'1' } else { b'0' });
    buf.push(if vw_on { b'1' } else { b'0' });
    buf.push(b'\n');
    for u in 0..g.num_tasks() as u32 {
        if vw_on {
            push_u64(&mut buf, g.vertex_weight(u, 0));
            buf.push(b'\t');
        }
        push_u64(&mut buf, g.degree(u) as u64);
        for (&v, &w) in g.neighbors(u).iter().zip(g.edge_weights(u)) {
            buf.push(b'\t');
            if ew_on {
                push_u64(&mut buf, w);
                buf.push(b'\t');
            }
            push_u64(&mut buf, v as u64);
        }
        buf.push(b'\n');
        if buf.len() >= 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)
}
