//! Shared pieces of the readers: gzip detection, a byte cursor with cheap error
//! positions, fast integer output, and the structural check of parsed CSR arrays.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use rayon::prelude::*;
use rayon::ThreadPool;

use crate::error::GraphError;

/// Returns the bytes, decompressed if they start with the gzip magic `1f 8b` (`path`
/// names the input in errors). Decompression stops with an error, not an abort, when the
/// data would expand beyond the memory this process has left ([`crate::memory::available`]),
/// and that error is told apart from corrupt or truncated data.
pub fn decompress<'a>(bytes: &'a [u8], path: &Path) -> Result<Cow<'a, [u8]>, GraphError> {
    if bytes.len() < 2 || bytes[0] != 0x1f || bytes[1] != 0x8b {
        return Ok(Cow::Borrowed(bytes));
    }
    let invalid = |message: String| GraphError::Invalid {
        path: Some(path.to_path_buf()),
        message,
    };
    // Half of what is left: the parsed arrays need room too.
    let budget = crate::memory::available();
    let limit = budget.map_or(u64::MAX, |b| b.bytes / 2);
    let too_large = |len: usize| {
        let size = crate::memory::human_bytes(len as u128);
        invalid(match budget {
            Some(b) => format!(
                "gzip data expands to more than {size} (decompression stopped: half of what {} \
                 leaves, {}, must stay for reading it)",
                b.source,
                crate::memory::human_bytes(u128::from(b.bytes))
            ),
            None => format!(
                "gzip data expands to more than {size}, more than this process can allocate"
            ),
        })
    };
    let mut decoder = flate2::read::MultiGzDecoder::new(bytes);
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let got = match decoder.read(&mut chunk) {
            Ok(0) => break,
            Ok(got) => got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(invalid(format!(
                    "gzip data: {source} (the file is truncated or corrupt, or has bytes after its gzip data)"
                )))
            }
        };
        if (out.len() + got) as u64 > limit {
            return Err(too_large(out.len() + got));
        }
        if crate::memory::fallible(|| out.try_reserve(got)).is_err() {
            return Err(too_large(out.len() + got));
        }
        out.extend_from_slice(&chunk[..got]);
    }
    Ok(Cow::Owned(out))
}

/// 1-based line and column (in bytes) of byte offset `off`. O(off); used on errors only.
pub fn line_col(b: &[u8], off: usize) -> (usize, usize) {
    let off = off.min(b.len());
    let before = &b[..off];
    let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1);
    (line, off - start + 1)
}

/// A position in a text file, for error messages.
pub(crate) struct Source<'a> {
    pub b: &'a [u8],
    pub path: &'a Path,
}

impl Source<'_> {
    /// A parse error at byte offset `off`.
    #[cold]
    pub fn err(&self, off: usize, message: impl Into<String>) -> GraphError {
        let (line, column) = line_col(self.b, off);
        GraphError::Parse {
            path: self.path.to_path_buf(),
            line,
            column,
            message: message.into(),
        }
    }

    /// The 1-based line of byte offset `off`.
    pub fn line(&self, off: usize) -> usize {
        line_col(self.b, off).0
    }
}

/// A cursor over the bytes of a text file. Separators are space, tab and `\r` (plus `,` when
/// `comma` is set); `\n` ends a line.
#[derive(Clone)]
pub(crate) struct Cursor<'a> {
    pub b: &'a [u8],
    pub pos: usize,
    pub path: &'a Path,
    pub comma: bool,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `b`, after a UTF-8 byte-order mark if there is one (editors
    /// on Windows write it; it is no part of any format read here).
    pub fn new(b: &'a [u8], path: &'a Path) -> Self {
        Self {
            b,
            pos: if b.starts_with(&[0xEF, 0xBB, 0xBF]) {
                3
            } else {
                0
            },
            path,
            comma: false,
        }
    }

    pub fn src(&self) -> Source<'a> {
        Source {
            b: self.b,
            path: self.path,
        }
    }

    #[cold]
    pub fn err(&self, off: usize, message: impl Into<String>) -> GraphError {
        self.src().err(off, message)
    }

    #[inline]
    pub fn is_sep(&self, c: u8) -> bool {
        c == b' ' || c == b'\t' || c == b'\r' || (self.comma && c == b',')
    }

    /// Skips separators on the current line.
    #[inline]
    pub fn skip_ws(&mut self) {
        while self.pos < self.b.len() && self.is_sep(self.b[self.pos]) {
            self.pos += 1;
        }
    }

    /// Skips the separators at the start of a line; whether the line is then blank or a
    /// `#` or `%` comment.
    #[inline]
    pub fn skip_blank_or_comment(&mut self) -> bool {
        self.skip_ws();
        self.at_eol() || matches!(self.peek(), Some(b'#') | Some(b'%'))
    }

    /// Skips separators and line ends.
    #[inline]
    pub fn skip_ws_nl(&mut self) {
        while self.pos < self.b.len()
            && (self.is_sep(self.b[self.pos]) || self.b[self.pos] == b'\n')
        {
            self.pos += 1;
        }
    }

    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    #[inline]
    pub fn at_eof(&self) -> bool {
        self.pos >= self.b.len()
    }

    /// At a `\n` or at the end of the file.
    #[inline]
    pub fn at_eol(&self) -> bool {
        self.pos >= self.b.len() || self.b[self.pos] == b'\n'
    }

    /// Skips separators and requires the end of the line: else an error at the first
    /// extra token, "unexpected `token` after {after}".
    pub fn end_line(&mut self, after: &str) -> Result<(), GraphError> {
        self.skip_ws();
        if self.at_eol() {
            return Ok(());
        }
        Err(self.err(
            self.pos,
            format!("unexpected `{}` after {after}", self.token_text(self.pos)),
        ))
    }

    /// Moves past the next `\n`. Returns whether one was found, i.e. whether another line
    /// (possibly empty) follows.
    #[inline]
    pub fn next_line(&mut self) -> bool {
        match self.b[self.pos.min(self.b.len())..]
            .iter()
            .position(|&c| c == b'\n')
        {
            Some(p) => {
                self.pos += p + 1;
                true
            }
            None => {
                self.pos = self.b.len();
                false
            }
        }
    }

    /// End of the token starting at `from` (first separator or line end).
    pub fn token_end(&self, from: usize) -> usize {
        let mut i = from;
        while i < self.b.len() && !self.is_sep(self.b[i]) && self.b[i] != b'\n' {
            i += 1;
        }
        i
    }

    /// The token starting at `from`, for messages (control characters escaped, so that a
    /// stray byte neither hides nor reaches the terminal raw).
    pub fn token_text(&self, from: usize) -> String {
        let end = self.token_end(from).min(from + 40);
        String::from_utf8_lossy(&self.b[from.min(end)..end])
            .chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect()
    }

    /// Reads a non-negative integer at the cursor. `what` names it in errors.
    #[inline]
    pub fn uint(&mut self, what: &str) -> Result<u64, GraphError> {
        let b = self.b;
        let start = self.pos;
        let mut i = start;
        let mut v: u64 = 0;
        while i < b.len() {
            let d = b[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = match v.checked_mul(10).and_then(|x| x.checked_add(d as u64)) {
                Some(x) => x,
                None => return Err(self.number_error(start, what, 0)),
            };
            i += 1;
        }
        if i == start || (i < b.len() && !self.is_sep(b[i]) && b[i] != b'\n') {
            return Err(self.number_error(start, what, 0));
        }
        self.pos = i;
        Ok(v)
    }

    /// Reads an integer that must be at least `min`.
    #[inline]
    pub fn uint_min(&mut self, what: &str, min: u64) -> Result<u64, GraphError> {
        let start = self.pos;
        match self.uint(what) {
            Ok(v) if v >= min => Ok(v),
            Ok(v) => Err(self.err(start, format!("{what} must be at least {min}, found {v}"))),
            Err(_) => Err(self.number_error(start, what, min)),
        }
    }

    /// The error for a token at `start` that is not a valid non-negative integer.
    #[cold]
    pub fn number_error(&self, start: usize, what: &str, min: u64) -> GraphError {
        if start >= self.b.len() {
            return self.err(start, format!("expected {what}, found end of file"));
        }
        if self.b[start] == b'\n' {
            return self.err(start, format!("expected {what}, found end of line"));
        }
        let tok = self.token_text(start);
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
        let msg = if let Some(rest) = tok.strip_prefix('-').filter(|r| digits(r)) {
            let _ = rest;
            if min > 0 {
                format!("{what} must be at least {min}, found {tok}")
            } else {
                format!("{what} must not be negative, found {tok}")
            }
        } else if digits(&tok) {
            format!("{what} {tok} is too large")
        } else {
            format!("expected {what} (an integer), found '{tok}'")
        };
        self.err(start, msg)
    }

    /// Reads a real number (`what` names it in errors) as an edge weight: 0 for zero (as
    /// written: `1e-400` is not zero), else `max(1, round(|x|))`. NaN, infinities and
    /// values that round to 2^64 or more are errors.
    pub fn real_weight(&mut self, what: &str) -> Result<u64, GraphError> {
        let p = self.pos;
        let end = self.token_end(p);
        let tok = std::str::from_utf8(&self.b[p..end]).ok();
        let x: f64 = match tok.and_then(|t| t.parse().ok()) {
            Some(x) => x,
            None if p == end => {
                return Err(self.err(p, format!("expected {what}, found end of line")))
            }
            None => {
                return Err(self.err(
                    p,
                    format!("expected {what}, found `{}`", self.token_text(p)),
                ))
            }
        };
        let text = tok.unwrap_or_default();
        if !x.is_finite() {
            let literal = text.to_ascii_lowercase();
            return Err(if literal.contains("inf") || literal.contains("nan") {
                self.err(p, format!("value {x} is not finite"))
            } else {
                // A number too large for a float, such as 1e400.
                self.err(p, format!("value {text} does not fit in 64 bits"))
            });
        }
        self.pos = end;
        // Zero as written: a positive value too small for a float (1e-400) is no zero.
        let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
        let written_zero = !mantissa.bytes().any(|c| (b'1'..=b'9').contains(&c));
        if x == 0.0 && written_zero {
            Ok(0)
        } else if x.abs().round() >= 18_446_744_073_709_551_616.0 {
            Err(self.err(p, format!("value {x} does not fit in 64 bits")))
        } else {
            Ok((x.abs().round() as u64).max(1))
        }
    }

    /// Byte offset of the `idx`-th token (0-based) at or after `from`, crossing line ends.
    /// Used to place errors after parsing.
    pub fn nth_token(&self, from: usize, idx: usize) -> usize {
        let mut c = Cursor {
            b: self.b,
            pos: from,
            path: self.path,
            comma: self.comma,
        };
        c.skip_ws_nl();
        for _ in 0..idx {
            c.pos = c.token_end(c.pos);
            c.skip_ws_nl();
        }
        c.pos
    }
}

/// Appends the decimal form of `v`.
#[inline]
pub(crate) fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// A defect of parsed CSR arrays. `e` and friends are indices into `adjncy`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Defect {
    /// Row `u` lists `u` itself at entry `e`.
    SelfLoop { e: usize },
    /// Entry `e` repeats the neighbour of entry `first` in the same row.
    Duplicate { first: usize, e: usize },
    /// Entry `e` (u -> v) has no reverse entry v -> u.
    NoReverse { e: usize },
    /// Entry `e` (u -> v) and its reverse `rev` (v -> u) have different weights.
    WeightMismatch { e: usize, rev: usize },
}

/// The row that holds entry `e`.
pub(crate) fn row_of(xadj: &[usize], e: usize) -> usize {
    xadj.partition_point(|&s| s <= e) - 1
}

/// Checks rows for self-loops and repeated neighbours, and symmetry with equal weights, and
/// reports the first defect in row order. Ids must already be in range. When every row is
/// sorted (as generators and most tools write them), binary searches in the rows check it
/// with no scratch, on `pool`'s threads when it has several ([`sorted_and_symmetric`]).
/// Otherwise the same check runs on a sorted copy with several threads (4 bytes per entry,
/// 4 more when the weights differ), and [`check_structure`]'s transposed pass with one. A
/// defect is always named by [`check_structure`].
pub(crate) fn check_structure_on(
    xadj: &[usize],
    adjncy: &[u32],
    ew: &[u64],
    pool: Option<&ThreadPool>,
) -> Result<(), Defect> {
    let Some(pool) = pool.filter(|p| p.current_num_threads() > 1) else {
        if sorted_and_symmetric(xadj, adjncy, &|_, e| ew[e], false) {
            return Ok(());
        }
        return check_structure(xadj, adjncy, ew);
    };
    let fine = pool.install(|| {
        sorted_and_symmetric(xadj, adjncy, &|_, e| ew[e], true) || {
            // Without weights to compare, the places are not kept.
            let weighted = !ew.par_iter().all(|&w| w == ew[0]);
            let (sorted, pos) = sorted_rows(xadj, adjncy, weighted);
            if weighted {
                let weight = |u: usize, e: usize| ew[xadj[u] + pos[e] as usize];
                sorted_and_symmetric(xadj, &sorted, &weight, true)
            } else {
                sorted_and_symmetric(xadj, &sorted, &|_, _| 0, true)
            }
        }
    });
    if fine {
        return Ok(());
    }
    check_structure(xadj, adjncy, ew)
}

/// Each row sorted, on the current rayon pool: the neighbour ids, and for each the place
/// it had in its row (when `places`; else an empty vector).
fn sorted_rows(xadj: &[usize], adjncy: &[u32], places: bool) -> (Vec<u32>, Vec<u32>) {
    const ROWS: usize = 1 << 12;
    let n = xadj.len() - 1;
    let mut sorted = vec![0u32; adjncy.len()];
    let mut pos = vec![0u32; if places { adjncy.len() } else { 0 }];
    let mut jobs = Vec::with_capacity(n.div_ceil(ROWS));
    let (mut s, mut p) = (&mut sorted[..], &mut pos[..]);
    for first in (0..n).step_by(ROWS) {
        let rows = first..(first + ROWS).min(n);
        let len = xadj[rows.end] - xadj[rows.start];
        let (s0, s1) = std::mem::take(&mut s).split_at_mut(len);
        let (p0, p1) = std::mem::take(&mut p).split_at_mut(if places { len } else { 0 });
        (s, p) = (s1, p1);
        jobs.push((rows, s0, p0));
    }
    jobs.into_par_iter()
        .for_each_init(Vec::new, |pairs: &mut Vec<(u32, u32)>, (rows, s, p)| {
            let base = xadj[rows.start];
            for u in rows {
                let (a, b) = (xadj[u], xadj[u + 1]);
                pairs.clear();
                pairs.extend(adjncy[a..b].iter().zip(0u32..).map(|(&v, k)| (v, k)));
                pairs.sort_unstable();
                for (i, &(v, k)) in pairs.iter().enumerate() {
                    s[a - base + i] = v;
                    if let Some(x) = p.get_mut(a - base + i) {
                        *x = k;
                    }
                }
            }
        });
    (sorted, pos)
}

/// Whether every row of `adjncy` is strictly increasing and free of its own id, every
/// entry u -> v with u < v has its reverse v -> u (found by binary search) with the same
/// weight, and as many entries point down as up. Rows without repeats make u -> v to
/// v -> u one to one, so with equal counts every entry has its reverse. `weight(u, e)` is
/// the weight of entry `e`, in row `u`. O(m log Δ) work, on the current rayon pool when
/// `parallel`, and no scratch; `false` says nothing about which defect there is.
fn sorted_and_symmetric(
    xadj: &[usize],
    adjncy: &[u32],
    weight: &(dyn Fn(usize, usize) -> u64 + Sync),
    parallel: bool,
) -> bool {
    let n = xadj.len() - 1;
    let row = |u: usize| &adjncy[xadj[u]..xadj[u + 1]];
    // Entries of row u below and above u, or `None` on a defect.
    let check_row = |u: usize| -> Option<(u64, u64)> {
        let r = row(u);
        if r.windows(2).any(|p| p[0] >= p[1]) {
            return None;
        }
        // Entries below u come first in a sorted row.
        let down = r.partition_point(|&v| (v as usize) < u);
        if r.get(down).is_some_and(|&v| v as usize == u) {
            return None;
        }
        for (k, &v) in r.iter().enumerate().skip(down) {
            let v = v as usize;
            match row(v).binary_search(&(u as u32)) {
                Ok(i) if weight(v, xadj[v] + i) == weight(u, xadj[u] + k) => {}
                _ => return None,
            }
        }
        Some((down as u64, (r.len() - down) as u64))
    };
    let add = |a: (u64, u64), b: (u64, u64)| Some((a.0 + b.0, a.1 + b.1));
    let counts = if parallel {
        (0..n)
            .into_par_iter()
            .with_min_len(1 << 12)
            .map(check_row)
            .try_reduce(|| (0, 0), add)
    } else {
        (0..n).try_fold((0, 0), |acc, u| add(acc, check_row(u)?))
    };
    counts.is_some_and(|(down, up)| down == up)
}

/// Checks rows for self-loops and repeated neighbours, and symmetry with equal weights, in
/// O(n + m) time and O(n + m) extra space (4 bytes per entry, 12 if weights differ). Ids
/// must already be in range. Reports the first defect in row order.
pub(crate) fn check_structure(xadj: &[usize], adjncy: &[u32], ew: &[u64]) -> Result<(), Defect> {
    let n = xadj.len() - 1;
    let weighted = ew.windows(2).any(|p| p[0] != p[1]);
    // Transpose: for each head v, the tails u of the entries u -> v, in increasing u.
    let mut tstart = vec![0usize; n + 1];
    for &v in adjncy {
        tstart[v as usize + 1] += 1;
    }
    for v in 0..n {
        tstart[v + 1] += tstart[v];
    }
    let mut fill = tstart.clone();
    let mut tsrc = vec![0u32; adjncy.len()];
    let mut tw = if weighted {
        vec![0u64; adjncy.len()]
    } else {
        Vec::new()
    };
    for u in 0..n {
        for e in xadj[u]..xadj[u + 1] {
            let v = adjncy[e] as usize;
            tsrc[fill[v]] = u as u32;
            if weighted {
                tw[fill[v]] = ew[e];
            }
            fill[v] += 1;
        }
    }
    drop(fill);
    // The entry u -> v (exists when called).
    let find = |u: usize, v: usize| {
        (xadj[u]..xadj[u + 1])
            .find(|&e| adjncy[e] as usize == v)
            .expect("transposed entry exists")
    };
    // mark[w] = entry index of w in the current row (valid if >= the row start).
    let mut mark = vec![usize::MAX; n];
    let mut stamp = vec![u32::MAX; n];
    for v in 0..n {
        let (s, t) = (xadj[v], xadj[v + 1]);
        for f in s..t {
            let w = adjncy[f] as usize;
            if w == v {
                return Err(Defect::SelfLoop { e: f });
            }
            let p = mark[w];
            if p != usize::MAX && p >= s {
                return Err(Defect::Duplicate { first: p, e: f });
            }
            mark[w] = f;
        }
        for k in tstart[v]..tstart[v + 1] {
            let u = tsrc[k] as usize;
            let r = mark[u];
            if r == usize::MAX || r < s {
                return Err(Defect::NoReverse { e: find(u, v) });
            }
            if weighted && ew[r] != tw[k] {
                // Report at the entry that comes first in the file.
                let e = find(u, v);
                let (e, rev) = if r < e { (r, e) } else { (e, r) };
                return Err(Defect::WeightMismatch { e, rev });
            }
            stamp[u] = v as u32;
        }
        if tstart[v + 1] - tstart[v] != t - s {
            for f in s..t {
                if stamp[adjncy[f] as usize] != v as u32 {
                    return Err(Defect::NoReverse { e: f });
                }
            }
        }
    }
    Ok(())
}

/// Turns a [`Defect`] into a message. `place(e)` gives the byte offset of entry `e` in the
/// file (where its neighbour id is written); `id(x)` is how task `x` is named in the file.
pub(crate) fn defect_error(
    src: &Source<'_>,
    d: Defect,
    xadj: &[usize],
    adjncy: &[u32],
    ew: &[u64],
    id: &dyn Fn(usize) -> u64,
    place: &dyn Fn(usize) -> usize,
) -> GraphError {
    match d {
        Defect::SelfLoop { e } => {
            let u = row_of(xadj, e);
            src.err(
                place(e),
                format!("vertex {} lists itself (self-loop)", id(u)),
            )
        }
        Defect::Duplicate { first, e } => {
            let u = row_of(xadj, e);
            let v = adjncy[e] as usize;
            let (l, c) = line_col(src.b, place(first));
            src.err(
                place(e),
                format!(
                    "vertex {} lists neighbour {} twice (first at {l}:{c})",
                    id(u),
                    id(v)
                ),
            )
        }
        Defect::NoReverse { e } => {
            let u = row_of(xadj, e);
            let v = adjncy[e] as usize;
            let vinfo = if xadj[v] == xadj[v + 1] {
                format!("vertex {} has no neighbours", id(v))
            } else {
                format!(
                    "the neighbours of {} start on line {}",
                    id(v),
                    src.line(place(xadj[v]))
                )
            };
            src.err(
                place(e),
                format!(
                    "edge {}-{} has no reverse edge {}-{} ({vinfo})",
                    id(u),
                    id(v),
                    id(v),
                    id(u)
                ),
            )
        }
        Defect::WeightMismatch { e, rev } => {
            let u = row_of(xadj, e);
            let v = adjncy[e] as usize;
            let (lu, lv) = (src.line(place(e)), src.line(place(rev)));
            src.err(
                place(e),
                format!(
                    "edge {}-{} has weight {} (line {lu}) but {}-{} has weight {} (line {lv})",
                    id(u),
                    id(v),
                    ew[e],
                    id(v),
                    id(u),
                    ew[rev]
                ),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// A random symmetric graph with sorted rows, as CSR arrays.
    fn random_csr(rng: &mut Xoshiro256PlusPlus) -> (Vec<usize>, Vec<u32>, Vec<u64>) {
        let n = rng.gen_range(1..40usize);
        let mut rows = vec![std::collections::BTreeMap::new(); n];
        for _ in 0..rng.gen_range(0..4 * n) {
            let (u, v, w) = (
                rng.gen_range(0..n),
                rng.gen_range(0..n),
                rng.gen_range(1..3),
            );
            if u != v {
                rows[u].insert(v as u32, w);
                rows[v].insert(u as u32, w);
            }
        }
        let mut xadj = vec![0];
        let (mut adjncy, mut ew) = (Vec::new(), Vec::new());
        for r in rows {
            adjncy.extend(r.keys());
            ew.extend(r.values());
            xadj.push(adjncy.len());
        }
        (xadj, adjncy, ew)
    }

    #[test]
    fn the_sorted_check_agrees_with_the_full_one() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let (mut good, mut bad) = (0, 0);
        for round in 0..4000 {
            let (xadj, mut adjncy, mut ew) = random_csr(&mut rng);
            let n = xadj.len() - 1;
            if adjncy.is_empty() {
                continue;
            }
            // Rows in another order (a valid graph still), then, every other round, one or
            // two defects: a weight, or a neighbour (a repeat, a self-loop, a missing
            // reverse).
            for _ in 0..rng.gen_range(0..3) {
                let u = row_of(&xadj, rng.gen_range(0..adjncy.len()));
                adjncy[xadj[u]..xadj[u + 1]].reverse();
                ew[xadj[u]..xadj[u + 1]].reverse();
            }
            for _ in 0..(round % 2) * rng.gen_range(1..3) {
                let e = rng.gen_range(0..adjncy.len());
                if rng.gen_bool(0.5) {
                    ew[e] += 1;
                } else {
                    adjncy[e] = rng.gen_range(0..n as u32);
                }
            }
            let sorted = (0..n).all(|u| adjncy[xadj[u]..xadj[u + 1]].is_sorted());
            let valid = check_structure(&xadj, &adjncy, &ew).is_ok();
            let weight = |_: usize, e: usize| ew[e];
            for parallel in [false, true] {
                let fast = pool.install(|| sorted_and_symmetric(&xadj, &adjncy, &weight, parallel));
                assert_eq!(fast, valid && sorted, "{xadj:?} {adjncy:?} {ew:?}");
            }
            // Unsorted rows take a sorted copy: valid graphs pass, others are named.
            assert_eq!(
                check_structure_on(&xadj, &adjncy, &ew, Some(&pool)).is_ok(),
                valid
            );
            if valid {
                good += 1
            } else {
                bad += 1
            }
        }
        assert!(good > 1500 && bad > 1000, "{good} valid, {bad} not");
    }
}
