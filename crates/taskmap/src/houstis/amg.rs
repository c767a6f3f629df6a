//! The Algorithm Mapper's graph files (`.amg`): MODULE and LINK lines, read into a
//! [`PrecedenceGraph`] with every error at its
//! line and column (docs/formats.md).

use std::collections::HashMap;
use std::path::Path;

use crate::error::Error;
use crate::houstis::precedence::*;

/// Reads an `.amg` file (plain or gzip); see the module documentation.
pub fn read_amg(path: &Path) -> Result<PrecedenceGraph, Error> {
    Ok(read_amg_model(path)?.0)
}

/// Reads an `.amg` file with its `G'` (computed once, while the file is checked).
pub fn read_amg_model(path: &Path) -> Result<(PrecedenceGraph, Deterministic), Error> {
    crate::hetero::io::ttig::with_text(path, |text| parse_amg_model(text, path))
}

/// Parses `.amg` text; `path` names the input in errors. Besides the syntax, checks that
/// the probabilities out of an `EOR` module are given and add up to at most 1, that links
/// out of an `AND` module have probability 1, and that the expected executions exist
/// (there is an entry, no loop repeats forever): such errors name the module's line.
pub fn parse_amg(text: &str, path: &Path) -> Result<PrecedenceGraph, Error> {
    Ok(parse_amg_model(text, path)?.0)
}

/// [`parse_amg`] with the graph's `G'`.
/// [`parse_amg`] with the graph's `G'`.
pub fn parse_amg_model(text: &str, path: &Path) -> Result<(PrecedenceGraph, Deterministic), Error> {
    let mut r = AmgReader {
        path,
        g: PrecedenceGraph {
            names: Vec::new(),
            time: Vec::new(),
            memory: Vec::new(),
            input: Vec::new(),
            output: Vec::new(),
            links: Vec::new(),
        },
        module_line: Vec::new(),
        index: HashMap::new(),
        pending: Vec::new(),
    };
    for (li, raw) in text.split('\n').enumerate() {
        r.read_line(li + 1, raw)?;
    }
    if r.g.names.is_empty() {
        let lines = text.lines().count().max(1);
        return Err(r.err(lines, 1, "no MODULE line: the graph is empty".into()));
    }
    let prob_sum = r.resolve_links()?;
    r.check_prob_sums(&prob_sum)?;
    match r.g.deterministic() {
        Ok(det) => Ok((r.g, det)),
        Err(e) => Err(r.err(r.module_line[e.module as usize], 1, e.message)),
    }
}

/// A `LINK` line as read, resolved once every module is known.
struct PendingLink<'a> {
    /// Its line.
    line: usize,
    /// Column of the source name.
    from_col: usize,
    /// Column of the destination name.
    to_col: usize,
    /// Source module name.
    from: &'a str,
    /// Destination module name.
    to: &'a str,
    /// Its ITUs.
    itus: f64,
    /// Its probability and that value's column, when given.
    prob: Option<(f64, usize)>,
}

/// The modules of an `.amg` file read so far and its links waiting for their names.
struct AmgReader<'t, 'p> {
    /// Names the input in errors.
    path: &'p Path,
    /// The modules so far (the links come at the end).
    g: PrecedenceGraph,
    /// Line of each module.
    module_line: Vec<usize>,
    /// Index of each module by name.
    index: HashMap<String, u32>,
    /// The `LINK` lines, in file order.
    pending: Vec<PendingLink<'t>>,
}

impl<'t> AmgReader<'t, '_> {
    /// The parse error at `line` and `column`.
    fn err(&self, line: usize, column: usize, message: String) -> Error {
        Error::parse(self.path, line, column, message)
    }

    /// The token `(c, t)` as a number of `what`: a finite real `>= 0` (`-0` read as 0).
    fn number(&self, line: usize, (c, t): (usize, &str), what: &str) -> Result<f64, Error> {
        t.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| v + 0.0)
            .ok_or_else(|| {
                self.err(
                    line,
                    c,
                    format!("expected {what} (a finite real >= 0), found \"{t}\""),
                )
            })
    }

    /// Reads line `line` of the file, a `MODULE` or a `LINK` line or a blank one.
    fn read_line(&mut self, line: usize, raw: &'t str) -> Result<(), Error> {
        if let Some(c) = raw.find('\r') {
            if c + 1 != raw.len() {
                return Err(self.err(line, c + 1, "a carriage return inside a line".into()));
            }
        }
        let body = raw.trim_end_matches('\r').split('#').next().unwrap_or("");
        let toks: Vec<(usize, &str)> = body
            .split_whitespace()
            .map(|t| (t.as_ptr() as usize - body.as_ptr() as usize + 1, t))
            .collect();
        let Some(&(kcol, kw)) = toks.first() else {
            return Ok(());
        };
        let end = body.trim_end().len() + 1;
        match kw.to_ascii_uppercase().as_str() {
            "MODULE" => self.module(line, kcol, end, &toks),
            "LINK" => self.link(line, end, &toks),
            _ => Err(self.err(
                line,
                kcol,
                format!("unknown keyword \"{kw}\" (expected MODULE or LINK)"),
            )),
        }
    }

    /// A `MODULE` line: a name, a time and the options; `end` is the column after the
    /// line's last token.
    fn module(
        &mut self,
        line: usize,
        kcol: usize,
        end: usize,
        toks: &[(usize, &str)],
    ) -> Result<(), Error> {
        if toks.len() < 3 {
            return Err(self.err(
                line,
                end,
                "missing value: MODULE takes a name and a time".into(),
            ));
        }
        let (nc, name) = toks[1];
        if name.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-') || name.contains('=') {
            return Err(self.err(
                line,
                nc,
                format!("a module name must not start with a digit or '-' or hold '=', found \"{name}\""),
            ));
        }
        if let Some(&i) = self.index.get(name) {
            return Err(self.err(
                line,
                nc,
                format!(
                    "module \"{name}\" is declared twice (first at line {})",
                    self.module_line[i as usize]
                ),
            ));
        }
        let time = self.number(line, toks[2], "a time")?;
        let (mem, input, output) = self.module_options(line, &toks[3..])?;
        let g = &mut self.g;
        if g.names.len() >= u32::MAX as usize - 1 {
            return Err(self.err(line, kcol, "too many modules".into()));
        }
        self.index.insert(name.to_string(), g.names.len() as u32);
        g.names.push(name.to_string());
        g.time.push(time);
        g.memory.push(mem);
        g.input.push(input);
        g.output.push(output);
        self.module_line.push(line);
        Ok(())
    }

    /// The `mem=`, `in=` and `out=` options of a `MODULE` line: its memory and its input
    /// and output logic (0, AND and AND when not given).
    fn module_options(
        &self,
        line: usize,
        opts: &[(usize, &str)],
    ) -> Result<(f64, Logic, Logic), Error> {
        let (mut mem, mut input, mut output) = (0.0, Logic::And, Logic::And);
        let mut seen: Vec<String> = Vec::new();
        for &(c, t) in opts {
            let Some((key, value)) = t.split_once('=') else {
                return Err(self.err(
                    line,
                    c,
                    format!("unexpected \"{t}\": after the time, MODULE takes mem=, in= and out="),
                ));
            };
            let key = key.to_ascii_lowercase();
            if seen.contains(&key) {
                return Err(self.err(line, c, format!("{key}= is given twice")));
            }
            seen.push(key.clone());
            let logic = |v: &str| match v.to_ascii_lowercase().as_str() {
                "and" => Ok(Logic::And),
                "eor" => Ok(Logic::Eor),
                _ => Err(self.err(line, c, format!("{key}= takes and or eor, found \"{v}\""))),
            };
            match key.as_str() {
                "mem" => {
                    mem = value
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite() && *v >= 0.0)
                        .ok_or_else(|| {
                            self.err(
                                line,
                                c,
                                format!("mem= takes a finite real >= 0, found \"{value}\""),
                            )
                        })?
                }
                "in" => input = logic(value)?,
                "out" => output = logic(value)?,
                _ => {
                    return Err(self.err(
                        line,
                        c,
                        format!("unknown option \"{key}=\" (expected mem=, in= or out=)"),
                    ))
                }
            }
        }
        Ok((mem, input, output))
    }

    /// A `LINK` line: kept with its ITUs and probability until every module is known;
    /// `end` is the column after the line's last token.
    fn link(&mut self, line: usize, end: usize, toks: &[(usize, &'t str)]) -> Result<(), Error> {
        if toks.len() < 4 {
            return Err(self.err(
                line,
                end,
                "missing value: LINK takes a source, a destination, ITUs and an optional probability".into(),
            ));
        }
        if toks.len() > 5 {
            return Err(self.err(
                line,
                toks[5].0,
                format!("unexpected \"{}\": LINK takes at most 4 values", toks[5].1),
            ));
        }
        let itus = self.number(line, toks[3], "ITUs")?;
        let prob = if toks.len() == 5 {
            let p = self.number(line, toks[4], "a probability")?;
            if p > 1.0 {
                return Err(self.err(
                    line,
                    toks[4].0,
                    format!("a probability is at most 1, found {p}"),
                ));
            }
            Some((p, toks[4].0))
        } else {
            None
        };
        self.pending.push(PendingLink {
            line,
            from_col: toks[1].0,
            to_col: toks[2].0,
            from: toks[1].1,
            to: toks[2].1,
            itus,
            prob,
        });
        Ok(())
    }

    /// Adds the pending links to the graph, in file order, with their probabilities
    /// checked against the source's output logic; returns the probability out of each module.
    fn resolve_links(&mut self) -> Result<Vec<f64>, Error> {
        let mut prob_sum = vec![0.0f64; self.g.modules()];
        let mut links = Vec::with_capacity(self.pending.len());
        for pl in &self.pending {
            let line = pl.line;
            let find = |name: &str, c: usize| {
                self.index
                    .get(name)
                    .copied()
                    .ok_or_else(|| self.err(line, c, format!("no module is named \"{name}\"")))
            };
            let (from, to) = (pl.from, pl.to);
            let (f, t) = (find(from, pl.from_col)?, find(to, pl.to_col)?);
            let p = match (self.g.output[f as usize], pl.prob) {
                (Logic::Eor, Some((p, _))) => p,
                (Logic::Eor, None) => {
                    return Err(self.err(
                        line,
                        pl.to_col + to.len(),
                        format!("missing probability: \"{from}\" has EOR output, so each of its links needs one"),
                    ))
                }
                (Logic::And, Some((p, c))) if p != 1.0 => {
                    return Err(self.err(
                        line,
                        c,
                        format!("\"{from}\" has AND output, so control takes every link out of it (probability 1), not {p}; declare it out=eor"),
                    ))
                }
                (Logic::And, _) => 1.0,
            };
            prob_sum[f as usize] += p;
            links.push(Link {
                from: f,
                to: t,
                itus: pl.itus,
                prob: p,
            });
        }
        self.g.links = links;
        Ok(prob_sum)
    }

    /// Checks that the probabilities out of every `EOR` module add up to at most 1.
    fn check_prob_sums(&self, prob_sum: &[f64]) -> Result<(), Error> {
        let g = &self.g;
        for i in 0..g.modules() {
            if prob_sum[i] > 1.0 + 1e-9 && g.output[i] == Logic::Eor {
                return Err(self.err(
                    self.module_line[i],
                    1,
                    format!(
                        "the probabilities out of \"{}\" (EOR output) add up to {}, more than 1",
                        g.names[i],
                        (prob_sum[i] * 1e9).round() / 1e9
                    ),
                ));
            }
        }
        Ok(())
    }
}
