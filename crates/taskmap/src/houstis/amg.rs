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
pub fn parse_amg_model(text: &str, path: &Path) -> Result<(PrecedenceGraph, Deterministic), Error> {
    let err = |line: usize, column: usize, message: String| Error::Parse {
        path: path.to_path_buf(),
        line,
        column,
        message,
    };
    let mut g = PrecedenceGraph {
        names: Vec::new(),
        time: Vec::new(),
        memory: Vec::new(),
        input: Vec::new(),
        output: Vec::new(),
        links: Vec::new(),
    };
    let mut module_line: Vec<usize> = Vec::new();
    let mut index: HashMap<String, u32> = HashMap::new();
    // (line, columns of from and to, names, itus, prob and its column)
    type Pending<'a> = (
        usize,
        usize,
        usize,
        &'a str,
        &'a str,
        f64,
        Option<(f64, usize)>,
    );
    let mut pending: Vec<Pending> = Vec::new();
    for (li, raw) in text.split('\n').enumerate() {
        let line = li + 1;
        if let Some(c) = raw.find('\r') {
            if c + 1 != raw.len() {
                return Err(err(line, c + 1, "a carriage return inside a line".into()));
            }
        }
        let body = raw.trim_end_matches('\r').split('#').next().unwrap_or("");
        let toks: Vec<(usize, &str)> = body
            .split_whitespace()
            .map(|t| (t.as_ptr() as usize - body.as_ptr() as usize + 1, t))
            .collect();
        let Some(&(kcol, kw)) = toks.first() else {
            continue;
        };
        let number = |k: usize, what: &str| -> Result<f64, Error> {
            let (c, t) = toks[k];
            t.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .map(|v| v + 0.0)
                .ok_or_else(|| {
                    err(
                        line,
                        c,
                        format!("expected {what} (a finite real >= 0), found \"{t}\""),
                    )
                })
        };
        let end = body.trim_end().len() + 1;
        match kw.to_ascii_uppercase().as_str() {
            "MODULE" => {
                if toks.len() < 3 {
                    return Err(err(
                        line,
                        end,
                        "missing value: MODULE takes a name and a time".into(),
                    ));
                }
                let (nc, name) = toks[1];
                if name.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-')
                    || name.contains('=')
                {
                    return Err(err(
                        line,
                        nc,
                        format!("a module name must not start with a digit or '-' or hold '=', found \"{name}\""),
                    ));
                }
                if let Some(&i) = index.get(name) {
                    return Err(err(
                        line,
                        nc,
                        format!(
                            "module \"{name}\" is declared twice (first at line {})",
                            module_line[i as usize]
                        ),
                    ));
                }
                let time = number(2, "a time")?;
                let (mut mem, mut input, mut output) = (0.0, Logic::And, Logic::And);
                let mut seen: Vec<String> = Vec::new();
                for &(c, t) in &toks[3..] {
                    let Some((key, value)) = t.split_once('=') else {
                        return Err(err(
                            line,
                            c,
                            format!("unexpected \"{t}\": after the time, MODULE takes mem=, in= and out="),
                        ));
                    };
                    let key = key.to_ascii_lowercase();
                    if seen.contains(&key) {
                        return Err(err(line, c, format!("{key}= is given twice")));
                    }
                    seen.push(key.clone());
                    let logic = |v: &str| match v.to_ascii_lowercase().as_str() {
                        "and" => Ok(Logic::And),
                        "eor" => Ok(Logic::Eor),
                        _ => Err(err(
                            line,
                            c,
                            format!("{key}= takes and or eor, found \"{v}\""),
                        )),
                    };
                    match key.as_str() {
                        "mem" => {
                            mem = value
                                .parse::<f64>()
                                .ok()
                                .filter(|v| v.is_finite() && *v >= 0.0)
                                .ok_or_else(|| {
                                    err(
                                        line,
                                        c,
                                        format!("mem= takes a finite real >= 0, found \"{value}\""),
                                    )
                                })?
                        }
                        "in" => input = logic(value)?,
                        "out" => output = logic(value)?,
                        _ => {
                            return Err(err(
                                line,
                                c,
                                format!("unknown option \"{key}=\" (expected mem=, in= or out=)"),
                            ))
                        }
                    }
                }
                if g.names.len() >= u32::MAX as usize - 1 {
                    return Err(err(line, kcol, "too many modules".into()));
                }
                index.insert(name.to_string(), g.names.len() as u32);
                g.names.push(name.to_string());
                g.time.push(time);
                g.memory.push(mem);
                g.input.push(input);
                g.output.push(output);
                module_line.push(line);
            }
            "LINK" => {
                if toks.len() < 4 {
                    return Err(err(
                        line,
                        end,
                        "missing value: LINK takes a source, a destination, ITUs and an optional probability".into(),
                    ));
                }
                if toks.len() > 5 {
                    return Err(err(
                        line,
                        toks[5].0,
                        format!("unexpected \"{}\": LINK takes at most 4 values", toks[5].1),
                    ));
                }
                let itus = number(3, "ITUs")?;
                let prob = if toks.len() == 5 {
                    let p = number(4, "a probability")?;
                    if p > 1.0 {
                        return Err(err(
                            line,
                            toks[4].0,
                            format!("a probability is at most 1, found {p}"),
                        ));
                    }
                    Some((p, toks[4].0))
                } else {
                    None
                };
                pending.push((line, toks[1].0, toks[2].0, toks[1].1, toks[2].1, itus, prob));
            }
            _ => {
                return Err(err(
                    line,
                    kcol,
                    format!("unknown keyword \"{kw}\" (expected MODULE or LINK)"),
                ))
            }
        }
    }
    if g.names.is_empty() {
        let lines = text.lines().count().max(1);
        return Err(err(lines, 1, "no MODULE line: the graph is empty".into()));
    }
    let mut prob_sum = vec![0.0f64; g.modules()];
    for &(line, fc, tc, from, to, itus, prob) in &pending {
        let find = |name: &str, c: usize| {
            index
                .get(name)
                .copied()
                .ok_or_else(|| err(line, c, format!("no module is named \"{name}\"")))
        };
        let (f, t) = (find(from, fc)?, find(to, tc)?);
        let p = match (g.output[f as usize], prob) {
            (Logic::Eor, Some((p, _))) => p,
            (Logic::Eor, None) => {
                return Err(err(
                    line,
                    tc + to.len(),
                    format!("missing probability: \"{from}\" has EOR output, so each of its links needs one"),
                ))
            }
            (Logic::And, Some((p, c))) if p != 1.0 => {
                return Err(err(
                    line,
                    c,
                    format!("\"{from}\" has AND output, so control takes every link out of it (probability 1), not {p}; declare it out=eor"),
                ))
            }
            (Logic::And, _) => 1.0,
        };
        prob_sum[f as usize] += p;
        g.links.push(Link {
            from: f,
            to: t,
            itus,
            prob: p,
        });
    }
    for i in 0..g.modules() {
        if prob_sum[i] > 1.0 + 1e-9 && g.output[i] == Logic::Eor {
            return Err(err(
                module_line[i],
                1,
                format!(
                    "the probabilities out of \"{}\" (EOR output) add up to {}, more than 1",
                    g.names[i],
                    (prob_sum[i] * 1e9).round() / 1e9
                ),
            ));
        }
    }
    match g.deterministic() {
        Ok(det) => Ok((g, det)),
        Err(e) => Err(err(module_line[e.module as usize], 1, e.message)),
    }
}
