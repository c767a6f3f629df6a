//! Dense communication matrices, as TreeMatch reads them (`.mat`, `.dense`).

use std::path::Path;

use super::text::{decompress, Cursor};
use super::volumes::Volumes;
use crate::error::GraphError;
use crate::graph::TaskGraph;

/// Most ranks of a dense matrix (its text has `n²` numbers).
pub const DENSE_MAX_RANKS: usize = 1 << 20;

/// Reads a dense communication matrix (gzip-compressed or plain).
///
/// Rules:
/// * `n` lines of `n` numbers: line `i`, column `j` is the volume rank `i` sends to rank
///   `j` (0-based), a decimal number. Separators are spaces, tabs and commas; lines
///   starting with `#` or `%` are comments and blank lines are skipped. The first line
///   gives `n`; a line of another length, or a number of lines other than `n`, is an
///   error.
/// * Any symmetry: the edge `{i, j}` weighs entry `(i, j)` plus entry `(j, i)`, each
///   rounded as in the sparse list (0 stays 0, otherwise at least 1); the diagonal is
///   ignored; negative, NaN and infinite entries are errors.
/// * Every rank is a task, with vertex weight 1 (`--task-weights` gives others), even one
///   that communicates with none.
pub fn read_dense_matrix(bytes: &[u8], name: &Path) -> Result<TaskGraph, GraphError> {
    let data = decompress(bytes, name)?;
    let b: &[u8] = &data;
    let mut c = Cursor::new(b, name);
    c.comma = true;
    let mut edges = Volumes::default();
    let mut n: Option<u32> = None;
    let mut row: u32 = 0;
    let mut last_row_pos = 0;
    let mut more = !b.is_empty();
    while more {
        if c.skip_blank_or_comment() {
            more = c.next_line();
            continue;
        }
        let line_pos = c.pos;
        if n.is_some_and(|n| row >= n) {
            return Err(c.err(
                line_pos,
                format!(
                    "line {} of a {}x{} matrix (one too many)",
                    row + 1,
                    row,
                    row
                ),
            ));
        }
        let mut col: u32 = 0;
        while !c.at_eol() {
            if col as usize >= DENSE_MAX_RANKS {
                return Err(c.err(c.pos, format!("more than {DENSE_MAX_RANKS} columns")));
            }
            if n.is_some_and(|n| col >= n) {
                return Err(c.err(
                    c.pos,
                    format!("row {} has more than {} entries", row + 1, n.unwrap_or(0)),
                ));
            }
            let (w, w_pos) = edges.volume(&mut c)?;
            edges.add(&c, row, col, w, w_pos)?;
            col += 1;
            c.skip_ws();
        }
        match n {
            None => n = Some(col),
            Some(n) if col < n => {
                return Err(c.err(
                    c.pos,
                    format!("row {} has {col} entries; the first row has {n}", row + 1),
                ));
            }
            _ => {}
        }
        row += 1;
        last_row_pos = line_pos;
        more = c.next_line();
    }
    let Some(n) = n else {
        return Err(c.err(0, "no row: an empty matrix"));
    };
    if row != n {
        return Err(c.err(
            last_row_pos,
            format!("{row} rows, but the rows have {n} entries: a dense matrix is square"),
        ));
    }
    Ok(edges.build_with_tasks(n as usize))
}
