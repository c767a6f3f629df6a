//! A mapping τ: task → PE, and its two file formats.
//!
//! * Scotch `.map`: the first line holds the number of entries `n`; then `n` lines
//!   `label pe`. Labels are task numbers, all 0-based or all 1-based (the smallest label
//!   decides: Scotch writes the graph's base value); each task appears exactly once, in any
//!   order.
//! * PE list (`.pes`, anything else): one PE number (0-based) per line, line `i` for task
//!   `i`. Lines starting with `%` or `#` and empty lines are skipped.
//!
//! Reading detects the format: a file whose first data line holds one number and whose
//! second holds two numbers is a Scotch mapping. [`Mapping::read_for`] also checks the
//! entries against a graph's task count and a target's PEs, at the line where they fail.

use std::path::Path;

use taskmap_arch::{Architecture, PeId};

use crate::error::{write_atomically, Error};

/// A complete mapping of every task to one PE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    pes: Vec<PeId>,
}

/// The file formats of a mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MappingFormat {
    /// Scotch `.map`: a count line, then `task pe` lines (0-based tasks).
    Scotch,
    /// One PE per line, line `i` for task `i`.
    PeList,
}

impl MappingFormat {
    /// The format for an output path: `.map` is Scotch, anything else a PE list.
    pub fn from_path(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some("map") => MappingFormat::Scotch,
            _ => MappingFormat::PeList,
        }
    }
}

impl Mapping {
    /// Wraps a vector indexed by task.
    pub fn new(pes: Vec<PeId>) -> Self {
        Self { pes }
    }

    /// Number of tasks mapped.
    pub fn len(&self) -> usize {
        self.pes.len()
    }

    /// Whether the mapping is empty.
    pub fn is_empty(&self) -> bool {
        self.pes.is_empty()
    }

    /// The PE of a task.
    #[inline]
    pub fn pe(&self, task: u32) -> PeId {
        self.pes[task as usize]
    }

    /// The PEs indexed by task.
    pub fn as_slice(&self) -> &[PeId] {
        &self.pes
    }

    /// Mutable access for refiners.
    pub fn as_mut_slice(&mut self) -> &mut [PeId] {
        &mut self.pes
    }

    /// Consumes the mapping.
    pub fn into_vec(self) -> Vec<PeId> {
        self.pes
    }

    /// Checks that the mapping covers `num_tasks` tasks and names PEs of `arch` only.
    pub fn check(&self, num_tasks: usize, arch: &dyn Architecture) -> Result<(), Error> {
        if self.pes.len() != num_tasks {
            return Err(Error::Mismatch(format!(
                "the mapping has {} tasks but the graph has {}",
                self.pes.len(),
                num_tasks
            )));
        }
        let k = arch.pe_count();
        if let Some((t, p)) = self.pes.iter().enumerate().find(|(_, p)| p.0 >= k) {
            return Err(Error::Mismatch(format!(
                "task {} is mapped to PE {} but the target has PEs 0..{} only",
                t, p.0, k
            )));
        }
        Ok(())
    }

    /// Reads a mapping file of either format (see the module doc).
    pub fn read(path: &Path) -> Result<Self, Error> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&bytes, path)
    }

    /// Reads a mapping file for a graph of `num_tasks` tasks and a target of `k` PEs:
    /// [`Mapping::read`], and an entry count that differs from `num_tasks` or a PE of `k`
    /// or above is an error at its line and column.
    pub fn read_for(path: &Path, num_tasks: usize, k: u32) -> Result<Self, Error> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::parse_for(&bytes, path, num_tasks, k)
    }

    /// Parses mapping text (see [`Mapping::read_for`]); `path` names the input in errors.
    pub fn parse_for(bytes: &[u8], path: &Path, num_tasks: usize, k: u32) -> Result<Self, Error> {
        Self::parse_inner(bytes, path, Some((num_tasks, k)))
    }

    /// Parses mapping text; `path` names the input in errors. One pass over the bytes, no
    /// allocation per line.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Self, Error> {
        Self::parse_inner(bytes, path, None)
    }

    /// [`Mapping::parse`], and with `expect = Some((num_tasks, k))` the checks of
    /// [`Mapping::read_for`].
    fn parse_inner(bytes: &[u8], path: &Path, expect: Option<(usize, u32)>) -> Result<Self, Error> {
        let err = |line: usize, column: usize, message: String| Error::Parse {
            path: path.into(),
            line,
            column,
            message,
        };
        // Data lines as (line number, up to three tokens (column, value or bad text)).
        let mut rows = DataLines::new(bytes);
        let first = rows.next_row(&err)?;
        let second = if first.is_some() {
            rows.peek_count(&err)?
        } else {
            0
        };
        // A lone `0` for a graph of no tasks is the Scotch header of an empty mapping (as
        // `write` gives it), not the PE of a task.
        let empty_scotch = matches!(expect, Some((0, _)))
            && matches!(&first, Some(r) if r.count == 1 && r.vals[0] == 0)
            && second == 0;
        let scotch = matches!(&first, Some(r) if r.count == 1) && (second == 2 || empty_scotch);
        if !scotch {
            let mut pes = Vec::with_capacity(bytes.len() / 4);
            let mut row = first;
            let mut last_line = 0;
            while let Some(r) = row {
                if r.count != 1 {
                    return Err(err(
                        r.line,
                        r.cols[1],
                        format!("expected one PE number per line, found {} fields", r.count),
                    ));
                }
                if let Some((n, _)) = expect {
                    if pes.len() == n {
                        return Err(err(
                            r.line,
                            r.cols[0],
                            format!("more PE lines than the graph's {n} tasks"),
                        ));
                    }
                }
                pes.push(pe_in(&r, 0, expect, &err)?);
                last_line = r.line;
                row = rows.next_row(&err)?;
            }
            if let Some((n, _)) = expect {
                if pes.len() < n {
                    return Err(err(
                        last_line.max(1),
                        1,
                        format!(
                            "the file gives the PEs of {} tasks but the graph has {n}",
                            pes.len()
                        ),
                    ));
                }
            }
            return Ok(Mapping::new(pes));
        }
        let header = first.expect("scotch mapping has a header");
        let n = header.vals[0];
        // Nothing is sized by the header's count before the lines are counted.
        let mut pairs: Vec<(u64, u32)> = Vec::new();
        let mut places: Vec<(usize, usize)> = Vec::new();
        let mut last_line = header.line;
        while let Some(r) = rows.next_row(&err)? {
            if r.count != 2 {
                return Err(err(
                    r.line,
                    r.cols[0],
                    format!("expected \"task pe\", found {} fields", r.count),
                ));
            }
            let p = pe_in(&r, 1, expect, &err)?;
            pairs.push((r.vals[0], p.0));
            places.push((r.line, r.cols[0]));
            last_line = r.line;
        }
        if let Some((tasks, _)) = expect {
            if n != tasks as u64 {
                return Err(err(
                    header.line,
                    header.cols[0],
                    format!(
                        "the header announces {n} mapping lines but the graph has {tasks} tasks"
                    ),
                ));
            }
        }
        if pairs.len() as u64 != n {
            // At the first line past the announced count, or at the last line.
            let line = usize::try_from(n)
                .ok()
                .and_then(|i| places.get(i))
                .map_or(last_line, |p| p.0);
            return Err(err(
                line,
                1,
                format!(
                    "the header announces {} mapping lines but the file has {}",
                    n,
                    pairs.len()
                ),
            ));
        }
        let n = pairs.len();
        let mut pes = vec![PeId(u32::MAX); n];
        // Labels are 0-based unless the smallest is 1 (Scotch writes the graph's base).
        let base = u64::from(pairs.iter().map(|p| p.0).min() == Some(1));
        for (&(t, p), &(ln, col)) in pairs.iter().zip(&places) {
            let idx = t.wrapping_sub(base);
            if idx >= n as u64 {
                return Err(err(
                    ln,
                    col,
                    format!(
                        "task {} out of range {}..={} (labels are {}-based)",
                        t,
                        base,
                        n as u64 - 1 + base,
                        base
                    ),
                ));
            }
            if pes[idx as usize].0 != u32::MAX {
                return Err(err(ln, col, format!("task {} is mapped twice", t)));
            }
            pes[idx as usize] = PeId(p);
        }
        Ok(Mapping::new(pes))
    }

    /// The mapping as text in the given format.
    pub fn to_text(&self, format: MappingFormat) -> String {
        use std::fmt::Write;
        let mut s = String::with_capacity(self.pes.len() * 8);
        if format == MappingFormat::Scotch {
            let _ = writeln!(s, "{}", self.pes.len());
        }
        for (t, p) in self.pes.iter().enumerate() {
            match format {
                MappingFormat::Scotch => {
                    let _ = writeln!(s, "{}\t{}", t, p.0);
                }
                MappingFormat::PeList => {
                    let _ = writeln!(s, "{}", p.0);
                }
            }
        }
        s
    }

    /// Writes the mapping to `path` atomically (temporary file, then rename).
    pub fn write(&self, path: &Path, format: MappingFormat) -> Result<(), Error> {
        write_atomically(path, self.to_text(format).as_bytes())
    }
}

/// One data line of a mapping file: up to two numbers and their columns.
struct Row {
    line: usize,
    count: usize,
    cols: [usize; 3],
    vals: [u64; 2],
}

fn pe_of<E>(r: &Row, i: usize, err: &impl Fn(usize, usize, String) -> E) -> Result<PeId, E> {
    let v = r.vals[i];
    // u32::MAX itself is kept free as the "unmapped" marker.
    if v >= u32::MAX as u64 {
        return Err(err(r.line, r.cols[i], format!("PE {} is too large", v)));
    }
    Ok(PeId(v as u32))
}

/// [`pe_of`], and with `expect = Some((_, k))` an error for a PE of `k` or above.
fn pe_in<E>(
    r: &Row,
    i: usize,
    expect: Option<(usize, u32)>,
    err: &impl Fn(usize, usize, String) -> E,
) -> Result<PeId, E> {
    let p = pe_of(r, i, err)?;
    match expect {
        Some((_, k)) if p.0 >= k => Err(err(
            r.line,
            r.cols[i],
            format!(
                "PE {} out of range 0..{} (the target has {} PEs)",
                p.0, k, k
            ),
        )),
        _ => Ok(p),
    }
}

/// Iterates over the data lines of a mapping file (skipping empty lines and lines starting
/// with `%` or `#`), parsing numbers in place.
struct DataLines<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> DataLines<'a> {
    /// Lines of `bytes`, after a UTF-8 byte-order mark if there is one.
    fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            pos: if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
                3
            } else {
                0
            },
            line: 0,
        }
    }

    /// The number of fields of the next data line, without consuming it.
    fn peek_count<E>(&mut self, err: &impl Fn(usize, usize, String) -> E) -> Result<usize, E> {
        let (pos, line) = (self.pos, self.line);
        let c = self.next_row(err)?.map_or(0, |r| r.count);
        self.pos = pos;
        self.line = line;
        Ok(c)
    }

    fn next_row<E>(&mut self, err: &impl Fn(usize, usize, String) -> E) -> Result<Option<Row>, E> {
        let b = self.bytes;
        while self.pos < b.len() {
            self.line += 1;
            let start = self.pos;
            let end = b[start..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |i| start + i);
            self.pos = end + 1;
            let mut i = start;
            while i < end && (b[i] == b' ' || b[i] == b'\t' || b[i] == b'\r') {
                i += 1;
            }
            if i == end || b[i] == b'%' || b[i] == b'#' {
                continue;
            }
            let mut row = Row {
                line: self.line,
                count: 0,
                cols: [0; 3],
                vals: [0; 2],
            };
            while i < end {
                if b[i].is_ascii_whitespace() {
                    i += 1;
                    continue;
                }
                let tok_start = i;
                while i < end && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
                let col = tok_start - start + 1;
                if row.count < 2 {
                    let tok = &b[tok_start..i];
                    let mut v: u64 = 0;
                    let ok = !tok.is_empty()
                        && tok.iter().all(|&c| {
                            c.is_ascii_digit()
                                && match v
                                    .checked_mul(10)
                                    .and_then(|x| x.checked_add(u64::from(c - b'0')))
                                {
                                    Some(x) => {
                                        v = x;
                                        true
                                    }
                                    None => false,
                                }
                        });
                    if !ok {
                        let digits = !tok.is_empty() && tok.iter().all(u8::is_ascii_digit);
                        return Err(err(
                            self.line,
                            col,
                            if digits {
                                format!(
                                    "number {} is too large (at most {})",
                                    String::from_utf8_lossy(tok),
                                    u64::MAX
                                )
                            } else {
                                format!(
                                    "expected a number (a non-negative integer), found \"{}\"",
                                    String::from_utf8_lossy(tok)
                                )
                            },
                        ));
                    }
                    row.vals[row.count] = v;
                }
                if row.count < 3 {
                    row.cols[row.count] = col;
                }
                row.count += 1;
            }
            return Ok(Some(row));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_both_formats() {
        let m = Mapping::new(vec![PeId(3), PeId(0), PeId(7), PeId(3)]);
        for f in [MappingFormat::Scotch, MappingFormat::PeList] {
            let text = m.to_text(f);
            let back = Mapping::parse(text.as_bytes(), Path::new("m")).unwrap();
            assert_eq!(back, m, "{:?}", f);
        }
    }

    #[test]
    fn scotch_one_based_any_order() {
        let text = "3\n3 1\n1 0\n2 5\n";
        let m = Mapping::parse(text.as_bytes(), Path::new("m")).unwrap();
        assert_eq!(m.as_slice(), &[PeId(0), PeId(5), PeId(1)]);
    }

    /// A UTF-8 byte-order mark (as editors on Windows write) is skipped, in both formats.
    #[test]
    fn byte_order_mark_is_skipped() {
        let m = Mapping::parse(b"\xEF\xBB\xBF0\n2\n1\n", Path::new("a.pes")).unwrap();
        assert_eq!(m.as_slice(), &[PeId(0), PeId(2), PeId(1)]);
        let m = Mapping::parse(b"\xEF\xBB\xBF2\n1 3\n0 4\n", Path::new("a.map")).unwrap();
        assert_eq!(m.as_slice(), &[PeId(4), PeId(3)]);
        let e = Mapping::parse(b"\xEF\xBB\xBF0\nx\n", Path::new("a.pes")).unwrap_err();
        assert!(
            e.to_string().starts_with("a.pes:2:1: expected a number"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = Mapping::parse(b"0\n1\nx\n", Path::new("a.pes")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.pes:3:1: expected a number (a non-negative integer), found \"x\""
        );
        let e = Mapping::parse(b"0\n18446744073709551616\n", Path::new("a.pes")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.pes:2:1: number 18446744073709551616 is too large (at most 18446744073709551615)"
        );
        let e = Mapping::parse(b"2\n0 1\n0 2\n", Path::new("a.map")).unwrap_err();
        assert_eq!(e.to_string(), "a.map:3:1: task 0 is mapped twice");
        let e = Mapping::parse(b"3\n0 1\n1 2\n", Path::new("a.map")).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("a.map:3:1: the header announces 3"));
        // A huge count in the header is an error, not an allocation.
        let e = Mapping::parse(b"18446744073709551615\n0 0\n", Path::new("a.map")).unwrap_err();
        assert!(
            e.to_string().contains("announces 18446744073709551615"),
            "{}",
            e
        );
        let e = Mapping::parse(b"4294967295\n", Path::new("a.pes")).unwrap_err();
        assert_eq!(e.to_string(), "a.pes:1:1: PE 4294967295 is too large");
        let e = Mapping::parse(b"1 2\n", Path::new("a.pes")).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("a.pes:1:3: expected one PE number"));
    }

    /// Read for a graph and a target, a mapping's size and PEs are checked where they
    /// are written; a mapping that fits reads as without the checks.
    #[test]
    fn checks_against_the_graph_and_target_name_the_line() {
        let msg = |text: &str, name: &str| {
            Mapping::parse_for(text.as_bytes(), Path::new(name), 3, 4)
                .unwrap_err()
                .to_string()
        };
        // One PE per line (a comment line counts in the numbering).
        assert_eq!(
            msg("0\n% c\n  9\n1\n", "a.pes"),
            "a.pes:3:3: PE 9 out of range 0..4 (the target has 4 PEs)"
        );
        assert_eq!(
            msg("0\n1\n2\n3\n", "a.pes"),
            "a.pes:4:1: more PE lines than the graph's 3 tasks"
        );
        assert_eq!(
            msg("0\n1\n\n", "a.pes"),
            "a.pes:2:1: the file gives the PEs of 2 tasks but the graph has 3"
        );
        assert_eq!(
            msg("", "a.pes"),
            "a.pes:1:1: the file gives the PEs of 0 tasks but the graph has 3"
        );
        // Scotch format.
        assert_eq!(
            msg("2\n0 1\n1 2\n", "a.map"),
            "a.map:1:1: the header announces 2 mapping lines but the graph has 3 tasks"
        );
        // The header against the graph first, then against the file's lines (at the
        // first line past the count, or at the last line).
        assert_eq!(
            msg("2\n0 1\n1 2\n2 0\n", "a.map"),
            "a.map:1:1: the header announces 2 mapping lines but the graph has 3 tasks"
        );
        assert_eq!(
            msg("3\n0 1\n1 2\n2 0\n0 3\n", "a.map"),
            "a.map:5:1: the header announces 3 mapping lines but the file has 4"
        );
        assert_eq!(
            msg("3\n0 1\n\n1 2\n", "a.map"),
            "a.map:4:1: the header announces 3 mapping lines but the file has 2"
        );
        assert_eq!(
            msg("3\n0 1\n1  4\n2 0\n", "a.map"),
            "a.map:3:4: PE 4 out of range 0..4 (the target has 4 PEs)"
        );
        for (text, name) in [("3\n2 1\n0 3\n1 0\n", "a.map"), ("1\n3\n0\n", "a.pes")] {
            let checked = Mapping::parse_for(text.as_bytes(), Path::new(name), 3, 4).unwrap();
            assert_eq!(
                checked,
                Mapping::parse(text.as_bytes(), Path::new(name)).unwrap()
            );
        }
    }
}
