//! Pegasus DAX workflows (XML, read with quick-xml) as heterogeneous programs, and the
//! job and file bookkeeping the workflow readers share.

use std::collections::HashMap;
use std::path::Path;

use quick_xml::events::{BytesEnd, BytesStart};

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
    let mut d = DaxReader {
        err: &err,
        negative_as_zero,
        jobs: WorkflowJobs::with_capacity("job", 0),
        index: HashMap::new(),
        arcs: Vec::new(),
        in_job: false,
        child: None,
        open: Vec::new(),
        roots: 0,
    };
    loop {
        let event = reader
            .read_event()
            .map_err(|e| err(reader.error_position() as usize, format!("XML: {e}")))?;
        let end = reader.buffer_position() as usize;
        let at = text[..end.min(text.len())].rfind('<').unwrap_or(0);
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                let empty = matches!(event, Event::Empty(_));
                d.open_element(e, empty, at)?;
                d.element(e, empty, at)?;
            }
            Event::End(e) => d.close_element(e),
            Event::Eof => {
                d.check_closed(text)?;
                break;
            }
            _ => {}
        }
    }
    if d.jobs.ids.is_empty() {
        return Err(err(text.len(), "no <job>: the workflow is empty".into()));
    }
    let resolved = d.resolve_arcs()?;
    let mut jobs = d.jobs;
    jobs.arcs = resolved;
    jobs.program(platform, slowness, &err)
}

/// The state of a DAX file read so far: the jobs, the dependencies by name and the open
/// elements.
struct DaxReader<'e> {
    /// Turns a byte offset and a message into the error.
    err: &'e dyn Fn(usize, String) -> Error,
    /// Whether a negative runtime or size reads as 0.
    negative_as_zero: bool,
    /// The jobs so far (their dependencies come at the end).
    jobs: WorkflowJobs,
    /// Index of each job by id.
    index: HashMap<String, usize>,
    /// (child, parent, place of the parent element)
    arcs: Vec<(String, String, usize)>,
    /// Whether a `<job>` element is open (its `<uses>` are read).
    in_job: bool,
    /// The `ref` of the open `<child>`.
    child: Option<String>,
    /// Places and names of the open elements.
    open: Vec<(usize, String)>,
    /// The root elements seen.
    roots: usize,
}

impl DaxReader<'_> {
    /// The value of attribute `name` of element `e` at byte `at`, if given. Every
    /// attribute is read, so a duplicate is an error (quick-xml checks them).
    fn attr(&self, e: &BytesStart, name: &str, at: usize) -> Result<Option<String>, Error> {
        let mut found = None;
        for a in e.attributes() {
            let a = a.map_err(|x| (self.err)(at, format!("XML attribute: {x}")))?;
            if found.is_none() && a.key.local_name().as_ref() == name.as_bytes() {
                let v = a
                    .unescape_value()
                    .map_err(|x| (self.err)(at, format!("XML attribute: {x}")))?;
                found = Some(v.into_owned());
            }
        }
        Ok(found)
    }

    /// The value of attribute `name` of the `<what>` element `e` at byte `at`, which must
    /// be given.
    fn need(&self, e: &BytesStart, name: &str, what: &str, at: usize) -> Result<String, Error> {
        self.attr(e, name, at)?
            .ok_or_else(|| (self.err)(at, format!("<{what}> without a {name} attribute")))
    }

    /// Checks that the element opened at byte `at` is in the one root, `<adag>`, and
    /// notes it as open unless `empty`.
    fn open_element(&mut self, e: &BytesStart, empty: bool, at: usize) -> Result<(), Error> {
        if self.open.is_empty() {
            if self.roots > 0 {
                return Err((self.err)(
                    at,
                    "a second root element (the workflow ended before)".into(),
                ));
            }
            if e.local_name().as_ref() != b"adag" {
                return Err((self.err)(
                    at,
                    format!(
                        "the root element is <{}>, not <adag>",
                        String::from_utf8_lossy(e.local_name().as_ref())
                    ),
                ));
            }
            self.roots += 1;
        }
        if !empty {
            self.open.push((
                at,
                String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
            ));
        }
        Ok(())
    }

    /// Closes the innermost open element, leaving a `<job>` or a `<child>`.
    fn close_element(&mut self, e: &BytesEnd) {
        self.open.pop();
        match e.local_name().as_ref() {
            b"job" => self.in_job = false,
            b"child" => self.child = None,
            _ => {}
        }
    }

    /// At the end of the text, checks that no element is left open.
    fn check_closed(&self, text: &str) -> Result<(), Error> {
        if let Some((at, name)) = self.open.last() {
            return Err((self.err)(
                text.len(),
                format!(
                    "the file ends inside the <{name}> opened at line {} (truncated?)",
                    taskmap_graph::line_col(text.as_bytes(), *at).0
                ),
            ));
        }
        Ok(())
    }

    /// Reads the element `e` opened at byte `at`: a job, a file it uses, a child or one
    /// of its parents; others are skipped.
    fn element(&mut self, e: &BytesStart, empty: bool, at: usize) -> Result<(), Error> {
        match e.local_name().as_ref() {
            b"job" => self.job(e, empty, at),
            b"uses" if self.in_job => self.uses(e, at),
            b"child" => {
                let r = self.need(e, "ref", "child", at)?;
                self.child = (!empty).then_some(r);
                Ok(())
            }
            b"parent" => {
                let Some(c) = &self.child else {
                    return Err((self.err)(at, "<parent> outside a <child>".into()));
                };
                let c = c.clone();
                let p = self.need(e, "ref", "parent", at)?;
                self.arcs.push((c, p, at));
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A `<job>` element: a new job with its id and runtime.
    fn job(&mut self, e: &BytesStart, empty: bool, at: usize) -> Result<(), Error> {
        let id = self.need(e, "id", "job", at)?;
        if self.index.contains_key(&id) {
            return Err((self.err)(at, format!("a second job with id \"{id}\"")));
        }
        let rt = self.need(e, "runtime", "job", at)?;
        let r = match (time_value(rt.trim()), rt.trim().parse::<f64>()) {
            (Some(v), _) => v,
            (None, Ok(v)) if v.is_finite() && self.negative_as_zero => 0.0,
            (None, Ok(v)) if v.is_finite() => {
                return Err((self.err)(
                    at,
                    format!("the runtime of job \"{id}\" is {rt}, below 0 {NEGATIVE_HINT}"),
                ))
            }
            _ => {
                return Err((self.err)(
                    at,
                    format!("the runtime of job \"{id}\" is \"{rt}\", not a finite real >= 0"),
                ))
            }
        };
        let jobs = &mut self.jobs;
        self.index.insert(id.clone(), jobs.ids.len());
        jobs.ids.push(id);
        jobs.at.push(at);
        jobs.runtime.push(r);
        jobs.reads.push(Vec::new());
        jobs.writes.push(HashMap::new());
        self.in_job = !empty;
        Ok(())
    }

    /// A `<uses>` element inside a job: a file the job reads or writes, with its size.
    fn uses(&mut self, e: &BytesStart, at: usize) -> Result<(), Error> {
        let file = self.need(e, "file", "uses", at)?;
        let size = match self.attr(e, "size", at)? {
            None => 0,
            Some(s) => match (s.trim().parse::<u64>(), s.trim().parse::<i64>()) {
                (Ok(v), _) => v,
                (Err(_), Ok(v)) if v < 0 && self.negative_as_zero => 0,
                (Err(_), Ok(v)) if v < 0 => {
                    return Err((self.err)(
                        at,
                        format!("the size of file \"{file}\" is {s}, below 0 {NEGATIVE_HINT}"),
                    ))
                }
                _ => {
                    return Err((self.err)(
                        at,
                        format!("the size of file \"{file}\" is \"{s}\", not an integer >= 0"),
                    ))
                }
            },
        };
        let link = self.attr(e, "link", at)?.unwrap_or_default();
        let j = self.jobs.ids.len() - 1;
        match link.as_str() {
            "input" => self.jobs.reads[j].push(file),
            "output" => {
                self.jobs.writes[j].insert(file, size);
            }
            _ => {}
        }
        Ok(())
    }

    /// The dependencies as (parent, child, place) job numbers, in file order.
    fn resolve_arcs(&self) -> Result<Vec<(usize, usize, usize)>, Error> {
        let mut resolved = Vec::with_capacity(self.arcs.len());
        for (c, p, at) in &self.arcs {
            let find = |r: &str| {
                self.index
                    .get(r)
                    .copied()
                    .ok_or_else(|| (self.err)(*at, format!("no job has the id \"{r}\"")))
            };
            let (ci, pi) = (find(c)?, find(p)?);
            // Refused here too, so that the first wrong dependency in the file is named.
            if pi == ci {
                return Err((self.err)(*at, format!("job \"{c}\" is its own parent")));
            }
            resolved.push((pi, ci, *at));
        }
        Ok(resolved)
    }
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
