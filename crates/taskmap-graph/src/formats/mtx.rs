//! Matrix Market coordinate files (`.mtx`).

use std::path::Path;

use super::text::{decompress, Cursor};
use crate::builder::GraphBuilder;
use crate::error::GraphError;
use crate::graph::TaskGraph;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Pattern,
    Integer,
    Real,
}

/// Reads a Matrix Market coordinate matrix as a task graph (gzip-compressed or plain,
/// detected by the magic bytes). Task `i` is row/column `i` (1-based in the file, 0-based
/// in the graph).
///
/// Rules:
/// * Line 1: `%%MatrixMarket matrix coordinate <field> <symmetry>` (keywords
///   case-insensitive). `field` is `pattern`, `integer` or `real` (`complex` and the `array`
///   format are errors). `symmetry` is `general`, `symmetric`, `skew-symmetric` or
///   `hermitian`; the last three are treated alike: each stored entry `(i, j)` stands for
///   the pair `{i, j}`.
/// * `%` comment lines and blank lines may follow; then the size line `rows cols nnz`.
///   `rows` must equal `cols`, and `rows` may be at most `2·nnz + 2^24` (`nnz` entries touch
///   at most `2·nnz` tasks; the `2^24` allow isolated tasks), otherwise the size line is an
///   error: a header such as `4000000000 4000000000 0` cannot make the reader allocate
///   gigabytes. Memory for the tasks is only allocated once all `nnz` entries have been read,
///   so an inflated `nnz` cannot either.
/// * Then exactly `nnz` entries `i j [value]`, one per line, ids in `1..=rows`; fewer or
///   more entries are errors.
/// * Weight of an entry: `pattern` -> 1; `integer` -> `|value|`; `real` ->
///   `max(1, round(|value|))`, an error from 2^64 on. Entries whose value is zero as
///   written (integer or real; a real such as `1e-400` that is zero only as a float weighs 1)
///   are dropped, and so are diagonal entries `(i, i)`. NaN and infinite values, and reals
///   too large for a float (`1e400`), are errors.
/// * The weight of the undirected edge `{i, j}` is the sum of the weights of all entries
///   `(i, j)` and `(j, i)`: for a general matrix `w(a_ij) + w(a_ji)`, for a symmetric one
///   the weight of the single stored entry; repeated entries are summed too. The weights of
///   all entries must add up to at most 2^64 − 1 (no edge weight can then overflow).
/// * All vertex weights are 1.
pub fn read_matrix_market(bytes: &[u8], name: &Path) -> Result<TaskGraph, GraphError> {
    let data = decompress(bytes, name)?;
    parse(&data, name)
}

fn parse(b: &[u8], path: &Path) -> Result<TaskGraph, GraphError> {
    let mut c = Cursor::new(b, path);
    let line_end = b.iter().position(|&x| x == b'\n').unwrap_or(b.len());
    let field = read_banner(&c, &b[..line_end])?;
    c.pos = line_end;
    let mut more = c.next_line();
    let size = read_size_line(&mut c, &mut more)?;
    let nnz = size.nnz;
    // The entries, kept until all of them have been read: the builder (whose memory grows
    // with n) is made only then, when nnz is known to be the real number of entries.
    let cap = (nnz as usize).min(b.len() / 4 + 1);
    let mut entries = Entries {
        total: 0,
        tail: Vec::with_capacity(cap),
        head: Vec::with_capacity(cap),
        weight: Vec::with_capacity(cap),
    };
    more = c.next_line();
    let mut k: u64 = 0;
    while k < nnz {
        if !next_data_line(&mut c, &mut more) {
            return Err(c.err(
                size.size_pos,
                format!("expected {nnz} entries, file ended after {k}"),
            ));
        }
        read_entry(&mut c, field, size.rows, &mut entries)?;
        k += 1;
        more = c.next_line();
    }
    if next_data_line(&mut c, &mut more) {
        return Err(c.err(
            c.pos,
            format!("more entries than the {nnz} announced in the size line"),
        ));
    }
    let mut g = GraphBuilder::new(size.rows as usize, 1);
    g.reserve_edges(entries.tail.len());
    for k in 0..entries.tail.len() {
        g.add_edge(entries.tail[k], entries.head[k], entries.weight[k]);
    }
    Ok(g.build())
}

/// Checks the banner, the first line `header` of the file, and returns its field.
fn read_banner(c: &Cursor, header: &[u8]) -> Result<Field, GraphError> {
    let header = String::from_utf8_lossy(header);
    let words: Vec<String> = header
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    if words.first().map(String::as_str) != Some("%%matrixmarket") {
        return Err(c.err(
            0,
            "expected the banner `%%MatrixMarket matrix coordinate <field> <symmetry>`",
        ));
    }
    let col_of = |k: usize| {
        // Byte offset of the k-th word of the banner.
        c.nth_token(0, k)
    };
    if words.len() != 5 {
        return Err(c.err(
            0,
            format!(
                "the banner must have 5 words (`%%MatrixMarket matrix coordinate <field> <symmetry>`), found {}",
                words.len()
            ),
        ));
    }
    if words[1] != "matrix" {
        return Err(c.err(
            col_of(1),
            format!("object `{}` is not supported (expected `matrix`)", words[1]),
        ));
    }
    if words[2] != "coordinate" {
        return Err(c.err(
            col_of(2),
            format!(
                "format `{}` is not supported (expected `coordinate`)",
                words[2]
            ),
        ));
    }
    let field = match words[3].as_str() {
        "pattern" => Field::Pattern,
        "integer" => Field::Integer,
        "real" | "double" => Field::Real,
        other => {
            return Err(c.err(
                col_of(3),
                format!("field `{other}` is not supported (expected pattern, integer or real)"),
            ))
        }
    };
    match words[4].as_str() {
        "general" | "symmetric" | "skew-symmetric" | "hermitian" => {}
        other => {
            return Err(c.err(
                col_of(4),
                format!("unknown symmetry `{other}` (expected general, symmetric, skew-symmetric or hermitian)"),
            ))
        }
    }
    Ok(field)
}

/// Skips comment and blank lines; returns false at the end of the file. `more` says
/// whether the cursor is on a line, and is kept up to date.
fn next_data_line(c: &mut Cursor<'_>, more: &mut bool) -> bool {
    loop {
        if !*more {
            return false;
        }
        c.skip_ws();
        if c.at_eol() || c.peek() == Some(b'%') {
            *more = c.next_line();
            continue;
        }
        return true;
    }
}

/// The size line of a Matrix Market file.
struct SizeLine {
    /// Rows, also the columns: the number of tasks.
    rows: u64,
    /// Entries announced.
    nnz: u64,
    /// Where the line starts.
    size_pos: usize,
}

/// Reads the size line `rows cols nnz` (after comment and blank lines) and checks it: a
/// square matrix, 32-bit ids, not too many rows for the entries. The cursor stays on it.
fn read_size_line(c: &mut Cursor, more: &mut bool) -> Result<SizeLine, GraphError> {
    if !next_data_line(c, more) {
        return Err(c.err(c.pos, "missing size line `rows cols nnz`"));
    }
    let size_pos = c.pos;
    let rows = c.uint("number of rows")?;
    c.skip_ws();
    let cols_pos = c.pos;
    let cols = c.uint("number of columns")?;
    c.skip_ws();
    let nnz = c.uint("number of entries")?;
    c.skip_ws();
    if !c.at_eol() {
        return Err(c.err(c.pos, "unexpected data after `rows cols nnz`"));
    }
    if rows != cols {
        return Err(c.err(
            cols_pos,
            format!("the matrix is {rows} x {cols}; a task graph needs a square matrix"),
        ));
    }
    if rows > u32::MAX as u64 {
        return Err(c.err(size_pos, format!("{rows} rows do not fit in 32-bit ids")));
    }
    let limit = 2u64.saturating_mul(nnz).saturating_add(1 << 24);
    if rows > limit {
        return Err(c.err(
            size_pos,
            format!("{rows} rows but only {nnz} entries (at most 2·nnz + 2^24 = {limit} tasks)"),
        ));
    }
    Ok(SizeLine {
        rows,
        nnz,
        size_pos,
    })
}

/// The entries kept so far (off the diagonal, weight above 0) and their total weight.
struct Entries {
    /// Sum of the weights.
    total: u64,
    /// Row of each entry.
    tail: Vec<u32>,
    /// Column of each entry.
    head: Vec<u32>,
    /// Weight of each entry.
    weight: Vec<u64>,
}

/// Reads the entry `i j [value]` at the cursor (ids in `1..=rows`) into `entries`, unless
/// it is on the diagonal or weighs 0; the cursor stays on its line.
#[inline]
fn read_entry(
    c: &mut Cursor,
    field: Field,
    rows: u64,
    entries: &mut Entries,
) -> Result<(), GraphError> {
    let id = |c: &mut Cursor<'_>, what: &str| -> Result<u32, GraphError> {
        let p = c.pos;
        let v = c.uint(what)?;
        if v == 0 || v > rows {
            return Err(c.err(p, format!("{what} {v} out of range 1..={rows}")));
        }
        c.skip_ws();
        Ok((v - 1) as u32)
    };
    let i = id(c, "row index")?;
    let j = id(c, "column index")?;
    let value_pos = c.pos;
    let w = match field {
        Field::Pattern => 1,
        Field::Integer => {
            if matches!(c.peek(), Some(b'-') | Some(b'+')) {
                c.pos += 1;
            }
            c.uint("integer value")?
        }
        Field::Real => c.real_weight("a real value")?,
    };
    c.end_line("the entry")?;
    if w != 0 && i != j {
        // Entries of one edge are summed: their total bounds every edge weight.
        entries.total = entries.total.checked_add(w).ok_or_else(|| {
            c.err(
                value_pos,
                "the entries' weights add up to more than 2^64-1 (an edge's entries are summed)",
            )
        })?;
        entries.tail.push(i);
        entries.head.push(j);
        entries.weight.push(w);
    }
    Ok(())
}

/// Writes `g` as a symmetric Matrix Market matrix: field `pattern` when all edge weights are
/// 1, else `integer`; one entry per undirected edge in the lower triangle (`row > col`,
/// 1-based). Vertex weights are not representable: a graph with them fails with
/// [`std::io::ErrorKind::InvalidInput`]. [`read_matrix_market`] reads it back.
pub fn write_matrix_market(g: &TaskGraph, out: &mut impl std::io::Write) -> std::io::Result<()> {
    use super::text::push_u64;
    super::edgelist::check_plain_vertices(g, "Matrix Market")?;
    let ew_on = g.has_edge_weights();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    buf.extend_from_slice(b"%%MatrixMarket matrix coordinate ");
    buf.extend_from_slice(if ew_on { b"integer" } else { b"pattern" });
    buf.extend_from_slice(b" symmetric\n");
    for x in [g.num_tasks(), g.num_tasks(), g.num_edges()] {
        push_u64(&mut buf, x as u64);
        buf.push(b' ');
    }
    buf.pop();
    buf.push(b'\n');
    for (u, v, w) in g.edges() {
        push_u64(&mut buf, v as u64 + 1);
        buf.push(b' ');
        push_u64(&mut buf, u as u64 + 1);
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
