//! Communication volumes between MPI ranks: the shared reading of volume lines (mpiP
//! graphs, sparse lists, dense matrices), and the sparse list `src dst bytes` itself
//! (`.csv`, `.vol`).
//!
//! Directed volumes are made symmetric by addition: the edge `{u, v}` weighs the volume
//! sent from `u` to `v` plus the volume sent from `v` to `u` (each rounded to an integer,
//! at least 1 unless it is 0), as every line naming the pair adds to it.

use std::path::Path;

use super::text::{decompress, Cursor};
use crate::builder::{DuplicateEdges, GraphBuilder};
use crate::error::GraphError;
use crate::graph::TaskGraph;

/// The volume lines read so far.
#[derive(Default)]
pub(super) struct Volumes {
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
    /// Volume lines read, kept or not.
    lines: usize,
}

impl Volumes {
    /// Reads a rank at the cursor (`what` names it in errors) and the blanks after it.
    pub(super) fn rank(&mut self, c: &mut Cursor<'_>, what: &str) -> Result<u32, GraphError> {
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

    /// Reads a volume at the cursor: a non-negative decimal number, rounded (see
    /// [`Cursor::real_weight`]); with its position.
    pub(super) fn volume(&mut self, c: &mut Cursor<'_>) -> Result<(u64, usize), GraphError> {
        let w_pos = c.pos;
        let negative = c.peek() == Some(b'-');
        let w = c.real_weight("a volume (a number)")?;
        if negative && w != 0 {
            return Err(c.err(
                w_pos,
                format!("volume must not be negative, found {}", c.token_text(w_pos)),
            ));
        }
        Ok((w, w_pos))
    }

    /// Adds the volume `w` (read at byte `w_pos`) from `u` to `v`, unless it is 0 or `u`
    /// is `v` (a rank's volume to itself does not depend on the mapping).
    pub(super) fn add(
        &mut self,
        c: &Cursor<'_>,
        u: u32,
        v: u32,
        w: u64,
        w_pos: usize,
    ) -> Result<(), GraphError> {
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

    /// The graph of the edges kept, with a task per rank up to the largest; `empty` is the
    /// error at byte `start_pos` when no line was read.
    pub(super) fn build(
        self,
        c: &Cursor<'_>,
        start_pos: usize,
        empty: &str,
    ) -> Result<TaskGraph, GraphError> {
        let Some(max_id) = self.max_id else {
            return Err(c.err(start_pos, empty));
        };
        let n = max_id as usize + 1;
        let lines = self.lines;
        let limit = 2 * lines as u64 + (1 << 24);
        if n as u64 > limit {
            return Err(c.err(
                self.max_id_pos,
                format!(
                    "rank {max_id} implies {n} tasks but there are only {lines} edge line(s) (at most 2·edges + 2^24 = {limit} tasks)"
                ),
            ));
        }
        Ok(self.build_with_tasks(n))
    }

    /// The graph of the edges kept on `n` tasks (above every rank read).
    pub(super) fn build_with_tasks(self, n: usize) -> TaskGraph {
        let mut g = GraphBuilder::new(n, 1).with_duplicates(DuplicateEdges::Sum);
        g.reserve_edges(self.tail.len());
        for i in 0..self.tail.len() {
            g.add_edge(self.tail[i], self.head[i], self.weight[i]);
        }
        g.build()
    }
}

/// Reads a sparse list of directed volumes (gzip-compressed or plain).
///
/// Rules:
/// * One line per message stream: `src dst bytes`, ranks 0-based, `bytes` a decimal
///   number (`38976`, `3.9e4`). Separators are spaces, tabs and commas (CSV as written by
///   spreadsheets and pandas). Lines starting with `#` or `%` are comments, blank lines are
///   skipped; a first line that starts with a letter or `"` is a header (`src,dst,bytes`).
/// * Volumes are made symmetric by addition (the module rule): every line naming a pair,
///   in either direction, adds to its edge. A volume of 0 and a rank's volume to itself
///   add nothing; a negative, NaN or infinite volume is an error.
/// * The number of tasks is the largest rank plus one (at most `2·m + 2^24` for `m` lines).
///   All vertex weights are 1; `--task-weights` gives others.
pub fn read_volumes(bytes: &[u8], name: &Path) -> Result<TaskGraph, GraphError> {
    let data = decompress(bytes, name)?;
    let b: &[u8] = &data;
    let mut c = Cursor::new(b, name);
    c.comma = true;
    let mut edges = Volumes::default();
    let mut first = true;
    let mut more = !b.is_empty();
    while more {
        if c.skip_blank_or_comment() {
            more = c.next_line();
            continue;
        }
        if std::mem::take(&mut first)
            && c.peek()
                .is_some_and(|x| x.is_ascii_alphabetic() || x == b'"')
        {
            more = c.next_line(); // a header
            continue;
        }
        let u = edges.rank(&mut c, "source rank")?;
        let v = edges.rank(&mut c, "destination rank")?;
        let (w, w_pos) = edges.volume(&mut c)?;
        c.end_line("`src dst bytes`")?;
        edges.add(&c, u, v, w, w_pos)?;
        more = c.next_line();
    }
    edges.build(&c, 0, "no volume line, so the number of ranks is unknown")
}
