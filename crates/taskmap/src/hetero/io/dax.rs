//! Pegasus DAX workflows (XML, read with quick-xml) as heterogeneous programs, and the
//! job and file bookkeeping the workflow readers share.

use std::collections::HashMap;
use std::path::Path;

use crate::error::Error;
use crate::hetero::io::stg::*;
use crate::hetero::io::ttig::*;
use crate::hetero::ttigha::*;

/// Reads a Pegasus DAX workflow (XML, plain or gzip) as a TTIGHa program on `platform`;
/// see [`parse_dax_program`].
pub fn read_dax_program(
    path: &Path,
    platform: Platform,
    slowness: &[f64],
    negative_as_zero: bool,
) -> Result<Ttigha, Error> {
    with_text(path, |text| {
        parse_dax_program(text, path, platform, slowness, negative_as_zero)
    })
}

/// A Pegasus DAX workflow (`<job id runtime>` with `<uses file link=input|output size>`,
/// `<child ref>` with `<parent ref>`) as a TTIGHa program: every job is a task of one
/// sub-task named by its id, its time on processor type `p` its `runtime` × `slowness[p]`;
/// every parent-child pair a message whose bytes are the summed sizes (as the parent
/// declares them) of the files the parent writes and the child reads (0 when they share
/// none: the child still waits for the parent, and a message between processors pays the
/// startup time). Errors name the
/// line and column of the element: XML syntax, a job without an id or runtime, a
/// duplicate id, a `ref` to no job, a negative or non-numeric runtime or size, a
/// `parent` outside a `child`, a job that is its own parent, a cycle, no jobs. With
/// `negative_as_zero`, a negative integer size or negative runtime reads as 0 instead
/// (some generated workflows have them: 209 sizes and 57 runtimes in the Pegasus set's
/// `Epigenomics_997`).
pub fn parse_dax_program(
    text: &str,
    path: &Path,
    platform: Platform,
    slowness: &[f64],
    negative_as_zero: bool,
) -> Result<Ttigha, Error> {
    use quick_xml::events::Event;
    let err = offset_error(text, path);
    check_slowness(path, &platform, slowness)?;
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().trim_text(true);
    // Jobs: id, runtime, files read, files written (with sizes).
    let mut ids: Vec<String> = Vec::new();
    let mut runtime: Vec<f64> = Vec::new();
    let mut reads: Vec<Vec<String>> = Vec::new();
    let mut writes: Vec<HashMap<String, u64>> = Vec::new();
    let mut job_at: Vec<usize> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    // (child, parent, place of the parent element)
    let mut arcs: Vec<(String, String, usize)> = Vec::new();
    let mut in_job = false;
    let mut child: Option<String> = None;
    // Places and names of the open elements, and the roots seen.
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut roots = 0;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| err(reader.error_position() as usize, format!("XML: {e}")))?;
        let end = reader.buffer_position() as usize;
        let at = text[..end.min(text.len())].rfind('<').unwrap_or(0);
        let (elem, empty) = match &event {
            Event::Start(e) | Event::Empty(e) => {
                // One root, <adag>.
                if open.is_empty() {
                    if roots > 0 {
                        return Err(err(
                            at,
                            "a second root element (the workflow ended before)".into(),
                        ));
                    }
                    if e.local_name().as_ref() != b"adag" {
                        return Err(err(
                            at,
                            format!(
                                "the root element is <{}>, not <adag>",
                                String::from_utf8_lossy(e.local_name().as_ref())
                            ),
                        ));
                    }
                    roots += 1;
                }
                let empty = matches!(event, Event::Empty(_));
                if !empty {
                    open.push((
                        at,
                        String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
                    ));
                }
                (Some(e.clone()), empty)
            }
            Event::End(e) => {
                open.pop();
                match e.local_name().as_ref() {
                    b"job" => in_job = false,
                    b"child" => child = None,
                    _ => {}
                }
                (None, false)
            }
            Event::Eof => {
                if let Some((at, name)) = open.last() {
                    return Err(err(
                        text.len(),
                        format!(
                            "the file ends inside the <{name}> opened at line {} (truncated?)",
                            taskmap_graph::line_col(text.as_bytes(), *at).0
                        ),
                    ));
                }
                break;
            }
            _ => (None, false),
        };
        let Some(e) = elem else { continue };
        // Every attribute is read, so a duplicate is an error (quick-xml checks them).
        let attr = |name: &str| -> Result<Option<String>, Error> {
            let mut found = None;
            for a in e.attributes() {
                let a = a.map_err(|x| err(at, format!("XML attribute: {x}")))?;
                if found.is_none() && a.key.local_name().as_ref() == name.as_bytes() {
                    let v = a
                        .unescape_value()
                        .map_err(|x| err(at, format!("XML attribute: {x}")))?;
                    found = Some(v.into_owned());
                }
            }
            Ok(found)
        };
        let need = |name: &str, what: &str| -> Result<String, Error> {
            attr(name)?.ok_or_else(|| err(at, format!("<{what}> without a {name} attribute")))
        };
        match e.local_name().as_ref() {
            b"job" => {
                let id = need("id", "job")?;
                if index.contains_key(&id) {
                    return Err(err(at, format!("a second job with id \"{id}\"")));
                }
                let rt = need("runtime", "job")?;
                let r = match (time_value(rt.trim()), rt.trim().parse::<f64>()) {
                    (Some(v), _) => v,
                    (None, Ok(v)) if v.is_finite() && negative_as_zero => 0.0,
                    (None, Ok(v)) if v.is_finite() => {
                        return Err(err(
                            at,
                            format!("the runtime of job \"{id}\" is {rt}, below 0 {NEGATIVE_HINT}"),
                        ))
                    }
                    _ => {
                        return Err(err(
                            at,
                            format!(
                                "the runtime of job \"{id}\" is \"{rt}\", not a finite real >= 0"
                            ),
                        ))
                    }
                };
                index.insert(id.clone(), ids.len());
                ids.push(id);
                job_at.push(at);
                runtime.push(r);
                reads.push(Vec::new());
                writes.push(HashMap::new());
                in_job = !empty;
            }
            b"uses" if in_job => {
                let file = need("file", "uses")?;
                let size = match attr("size")? {
                    None => 0,
                    Some(s) => match (s.trim().parse::<u64>(), s.trim().parse::<i64>()) {
                        (Ok(v), _) => v,
                        (Err(_), Ok(v)) if v < 0 && negative_as_zero => 0,
                        (Err(_), Ok(v)) if v < 0 => {
                            return Err(err(
                                at,
                                format!(
                                    "the size of file \"{file}\" is {s}, below 0 {NEGATIVE_HINT}"
                                ),
                            ))
                        }
                        _ => {
                            return Err(err(
                                at,
                                format!(
                                    "the size of file \"{file}\" is \"{s}\", not an integer >= 0"
                                ),
                            ))
                        }
                    },
                };
                let link = attr("link")?.unwrap_or_default();
                let j = ids.len() - 1;
                match link.as_str() {
                    "input" => reads[j].push(file),
                    "output" => {
                        writes[j].insert(file, size);
                    }
                    _ => {}
                }
            }
            b"child" => {
                let r = need("ref", "child")?;
                child = (!empty).then_some(r);
            }
            b"parent" => {
                let Some(c) = &child else {
                    return Err(err(at, "<parent> outside a <child>".into()));
                };
                let p = need("ref", "parent")?;
                arcs.push((c.clone(), p, at));
            }
            _ => {}
        }
    }
    if ids.is_empty() {
        return Err(err(text.len(), "no <job>: the workflow is empty".into()));
    }
    let mut resolved = Vec::with_capacity(arcs.len());
    for (c, p, at) in &arcs {
        let find = |r: &str| {
            index
                .get(r)
                .copied()
                .ok_or_else(|| err(*at, format!("no job has the id \"{r}\"")))
        };
        let (ci, pi) = (find(c)?, find(p)?);
        // Refused here too, so that the first wrong dependency in the file is named.
        if pi == ci {
            return Err(err(*at, format!("job \"{c}\" is its own parent")));
        }
        resolved.push((pi, ci, *at));
    }
    let jobs = WorkflowJobs {
        what: "job",
        ids,
        at: job_at,
        runtime,
        reads,
        writes,
        arcs: resolved,
    };
    jobs.program(platform, slowness, &err)
}

/// Turns a byte offset into `text` and a message into the error at that line and column.
pub(crate) fn offset_error<'a>(
    text: &'a str,
    path: &'a Path,
) -> impl Fn(usize, String) -> Error + 'a {
    move |pos, message| {
        let (line, column) = taskmap_graph::line_col(text.as_bytes(), pos);
        Error::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message,
        }
    }
}

/// The jobs of a workflow file (Pegasus DAX, WfCommons) and their dependencies, before
/// they become a program.
pub(crate) struct WorkflowJobs {
    /// What the format calls a job ("job", "task"), for error messages.
    pub what: &'static str,
    pub ids: Vec<String>,
    /// Where each job is declared (a byte offset).
    pub at: Vec<usize>,
    pub runtime: Vec<f64>,
    /// The files each job reads.
    pub reads: Vec<Vec<String>>,
    /// The files each job writes, with their sizes in bytes.
    pub writes: Vec<HashMap<String, u64>>,
    /// (parent, child, where the dependency is written), repeats allowed.
    pub arcs: Vec<(usize, usize, usize)>,
}

impl WorkflowJobs {
    /// No jobs yet, room for `n`; `what` names a job in errors.
    pub(crate) fn with_capacity(what: &'static str, n: usize) -> Self {
        WorkflowJobs {
            what,
            ids: Vec::with_capacity(n),
            at: Vec::with_capacity(n),
            runtime: Vec::with_capacity(n),
            reads: Vec::with_capacity(n),
            writes: Vec::with_capacity(n),
            arcs: Vec::new(),
        }
    }

    /// The program: a task of one sub-task per job (named by its id, its time on processor
    /// type `p` its runtime × `slowness[p]`), a message per parent-child pair whose bytes
    /// are the summed sizes (as the parent declares them) of the files the parent writes
    /// and the child reads, each file once. `err` turns a byte offset and a message into
    /// the error.
    pub(crate) fn program(
        mut self,
        platform: Platform,
        slowness: &[f64],
        err: &dyn Fn(usize, String) -> Error,
    ) -> Result<Ttigha, Error> {
        let top = slowness.iter().copied().fold(0.0, f64::max);
        let mut total = 0.0f64;
        for (r, &at) in self.runtime.iter().zip(&self.at) {
            total += r * top;
            if !total.is_finite() {
                return Err(err(at, TOO_LONG.into()));
            }
        }
        let mut writers: HashMap<&str, Vec<(usize, u64)>> = HashMap::new();
        for (j, w) in self.writes.iter().enumerate() {
            for (f, &size) in w {
                writers.entry(f.as_str()).or_default().push((j, size));
            }
        }
        let mut pair_at: HashMap<(usize, usize), usize> = HashMap::new();
        let mut pairs: Vec<(usize, usize, u64, usize)> = Vec::with_capacity(self.arcs.len());
        for &(pi, ci, at) in &self.arcs {
            if ci == pi {
                return Err(err(
                    at,
                    format!("{} \"{}\" is its own parent", self.what, self.ids[ci]),
                ));
            }
            if let std::collections::hash_map::Entry::Vacant(v) = pair_at.entry((pi, ci)) {
                v.insert(pairs.len());
                pairs.push((pi, ci, 0, at));
            }
        }
        for (ci, r) in self.reads.iter_mut().enumerate() {
            r.sort_unstable();
            r.dedup();
            for f in r.iter() {
                for &(pi, size) in writers.get(f.as_str()).map_or(&[][..], |v| &v[..]) {
                    if let Some(&k) = pair_at.get(&(pi, ci)) {
                        pairs[k].2 = pairs[k].2.saturating_add(size);
                    }
                }
            }
        }
        let mut messages = Vec::with_capacity(pairs.len());
        let mut places = Vec::with_capacity(pairs.len());
        for &(pi, ci, bytes, at) in &pairs {
            total += platform.worst_message(bytes);
            if !total.is_finite() {
                return Err(err(at, TOO_LONG_COMM.into()));
            }
            messages.push(SubtaskMessage {
                from: pi as u32,
                to: ci as u32,
                bytes,
            });
            places.push(at);
        }
        let tasks = self
            .ids
            .iter()
            .zip(&self.runtime)
            .map(|(id, &r)| {
                (
                    id.clone(),
                    vec![(id.clone(), slowness.iter().map(|s| r * s).collect())],
                )
            })
            .collect();
        let what = self.what;
        let program = HeteroProgram::new(platform.types(), tasks, messages).map_err(|e| {
            err(
                places[e.message as usize],
                format!("this dependency lies on a cycle of {what}s"),
            )
        })?;
        Ok(Ttigha { platform, program })
    }
}
