//! WfCommons workflow instances (JSON, the format of the WfInstances traces and of WfGen's
//! synthetic workflows) as TTIGHa programs, like Pegasus DAX workflows
//! ([`super::ttigha::parse_dax_program`]).
//!
//! Two layouts are read:
//!
//! * schema 1.5: `workflow.specification.tasks` (`id`, `parents`, `children`,
//!   `inputFiles`, `outputFiles`: ids), `workflow.specification.files` (`id`,
//!   `sizeInBytes`) and `workflow.execution.tasks` (`id`, `runtimeInSeconds`);
//! * schemas up to 1.4 (and WRENCH's 1.0): `workflow.tasks` (or `workflow.jobs`), each
//!   with a `name`, an optional `id`, `runtimeInSeconds` (or `runtime`), `parents` and
//!   `children` (names, or ids), and `files` (`link`: `input` or `output`, `name` or `id`,
//!   `sizeInBytes` or `size`).
//!
//! Every task becomes a task of one sub-task named by its id (its name before 1.5), its
//! time on processor type `p` its runtime × `slowness[p]`; every parent-child pair (from
//! either side's list) a message carrying the files the parent writes and the child
//! reads. Members this reader does not use are ignored. Errors name `file:line:column` of
//! the value that is wrong.

use std::collections::HashMap;
use std::path::Path;

use super::json::{self, Node, Value};
use super::ttigha::{
    check_slowness, offset_error, time_value, with_text, Platform, Ttigha, WorkflowJobs,
    NEGATIVE_HINT,
};
use crate::error::Error;

/// Reads a workflow, Pegasus DAX (XML) or WfCommons (JSON), plain or gzip: a file whose
/// first character other than white space is `<` is read as DAX, any other as WfCommons.
pub fn read_workflow_program(
    path: &Path,
    platform: Platform,
    slowness: &[f64],
    negative_as_zero: bool,
) -> Result<Ttigha, Error> {
    with_text(path, |text| {
        if text.trim_start().starts_with('<') {
            super::ttigha::parse_dax_program(text, path, platform, slowness, negative_as_zero)
        } else {
            parse_wfcommons_program(text, path, platform, slowness, negative_as_zero)
        }
    })
}

/// A WfCommons instance as a program on `platform` (see the module documentation). With
/// `negative_as_zero`, a negative runtime or file size reads as 0 instead of an error.
pub fn parse_wfcommons_program(
    text: &str,
    path: &Path,
    platform: Platform,
    slowness: &[f64],
    negative_as_zero: bool,
) -> Result<Ttigha, Error> {
    let err = offset_error(text, path);
    check_slowness(path, &platform, slowness)?;
    let root = json::parse(text).map_err(|(at, m)| err(at, format!("JSON: {m}")))?;
    let r = Reader {
        err: &err,
        negative_as_zero,
    };
    r.object(&root, "the instance")?;
    let workflow = r.member(&root, "workflow", "the instance")?;
    r.object(workflow, "workflow")?;
    let jobs = match workflow.get("specification") {
        Some(spec) => r.schema_15(workflow, spec)?,
        None => r.schema_14(workflow)?,
    };
    jobs.program(platform, slowness, &err)
}

/// Reads the members of a parsed instance, turning wrong values into placed errors.
struct Reader<'e> {
    err: &'e dyn Fn(usize, String) -> Error,
    negative_as_zero: bool,
}

/// A reference to a task (a parent or a child), resolved once every task is read.
struct Ref<'t> {
    /// The task whose list holds the reference.
    task: usize,
    name: &'t str,
    /// Whether the reference names a parent (else a child).
    parent: bool,
    at: usize,
}

impl<'e> Reader<'e> {
    fn object(&self, n: &Node, what: &str) -> Result<(), Error> {
        match n.value {
            Value::Object(_) => Ok(()),
            _ => Err((self.err)(
                n.at,
                format!("{what} is {}, not an object", n.kind()),
            )),
        }
    }

    fn member<'n, 'a>(
        &self,
        n: &'n Node<'a>,
        key: &str,
        what: &str,
    ) -> Result<&'n Node<'a>, Error> {
        n.get(key).ok_or_else(|| {
            (self.err)(
                n.at,
                format!("{what} has no \"{key}\" member (is this a WfCommons instance?)"),
            )
        })
    }

    fn array<'n, 'a>(&self, n: &'n Node<'a>, what: &str) -> Result<&'n [Node<'a>], Error> {
        n.as_array()
            .ok_or_else(|| (self.err)(n.at, format!("{what} is {}, not an array", n.kind())))
    }

    /// An optional array member (missing or null: empty).
    fn list<'n, 'a>(
        &self,
        n: &'n Node<'a>,
        key: &str,
        what: &str,
    ) -> Result<&'n [Node<'a>], Error> {
        match n.get(key) {
            None => Ok(&[]),
            Some(v) if v.value == Value::Null => Ok(&[]),
            Some(v) => self.array(v, &format!("\"{key}\" of {what}")),
        }
    }

    /// Errors when the task list `tasks` (the value `n`) is empty.
    fn some(&self, n: &Node, tasks: &[Node], what: &str) -> Result<(), Error> {
        if tasks.is_empty() {
            return Err((self.err)(
                n.at,
                format!("{what} is empty: the workflow has no task"),
            ));
        }
        Ok(())
    }

    fn string<'n>(&self, n: &'n Node, what: &str) -> Result<&'n str, Error> {
        n.as_str()
            .ok_or_else(|| (self.err)(n.at, format!("{what} is {}, not a string", n.kind())))
    }

    /// The first of `keys` present in `n`, as a string.
    fn string_member<'n>(&self, n: &'n Node, keys: &[&str], what: &str) -> Result<&'n str, Error> {
        match keys.iter().find_map(|k| n.get(k).map(|v| (k, v))) {
            Some((k, v)) => self.string(v, &format!("the \"{k}\" of {what}")),
            None => Err((self.err)(
                n.at,
                format!("{what} has no \"{}\" member", keys.join("\" or \"")),
            )),
        }
    }

    /// The runtime in the first of `keys` present in `n`: a finite real `>= 0`.
    fn runtime(&self, n: &Node, keys: &[&str], task: &str) -> Result<f64, Error> {
        let Some((key, v)) = keys.iter().find_map(|k| n.get(k).map(|v| (k, v))) else {
            return Err((self.err)(
                n.at,
                format!(
                    "task \"{task}\" has no \"{}\" member",
                    keys.join("\" or \"")
                ),
            ));
        };
        let Value::Number(t) = v.value else {
            return Err((self.err)(
                v.at,
                format!(
                    "the \"{key}\" of task \"{task}\" is {}, not a number",
                    v.kind()
                ),
            ));
        };
        match (time_value(t), v.as_f64()) {
            (Some(x), _) => Ok(x),
            (None, Some(x)) if x.is_finite() && self.negative_as_zero => Ok(0.0),
            (None, Some(x)) if x.is_finite() => Err((self.err)(
                v.at,
                format!("the runtime of task \"{task}\" is {t}, below 0 {NEGATIVE_HINT}"),
            )),
            _ => Err((self.err)(
                v.at,
                format!("the runtime of task \"{task}\" is {t}, beyond the largest float"),
            )),
        }
    }

    /// A file size: an integer `>= 0` (written with or without a fraction or exponent).
    fn size(&self, v: &Node, file: &str) -> Result<u64, Error> {
        let Value::Number(t) = v.value else {
            return Err((self.err)(
                v.at,
                format!("the size of file \"{file}\" is {}, not a number", v.kind()),
            ));
        };
        if let Ok(s) = t.parse::<u64>() {
            return Ok(s);
        }
        let x = v.as_f64().unwrap_or(f64::INFINITY);
        if x < 0.0 && x.is_finite() {
            return if self.negative_as_zero {
                Ok(0)
            } else {
                Err((self.err)(
                    v.at,
                    format!("the size of file \"{file}\" is {t}, below 0 {NEGATIVE_HINT}"),
                ))
            };
        }
        if x.fract() == 0.0 && x < 1.8e19 {
            return Ok(x as u64);
        }
        Err((self.err)(
            v.at,
            format!("the size of file \"{file}\" is {t}, not an integer of at most 64 bits"),
        ))
    }

    /// Schema 1.5: specification (tasks, files) and execution (runtimes).
    fn schema_15(&self, workflow: &Node, spec: &Node) -> Result<WorkflowJobs, Error> {
        self.object(spec, "workflow.specification")?;
        let list = self.member(spec, "tasks", "workflow.specification")?;
        let tasks = self.array(list, "workflow.specification.tasks")?;
        self.some(list, tasks, "workflow.specification.tasks")?;
        let mut sizes: HashMap<&str, u64> = HashMap::new();
        for f in self.list(spec, "files", "workflow.specification")? {
            self.object(f, "a file of workflow.specification.files")?;
            let id = self.string_member(f, &["id"], "a file")?;
            let size = match f.get("sizeInBytes") {
                Some(v) => self.size(v, id)?,
                None => 0,
            };
            if sizes.insert(id, size).is_some() {
                return Err((self.err)(f.at, format!("a second file with id \"{id}\"")));
            }
        }
        let execution = self.member(workflow, "execution", "workflow")?;
        self.object(execution, "workflow.execution")?;
        let mut runtimes: HashMap<&str, (f64, usize)> = HashMap::new();
        for t in self.array(
            self.member(execution, "tasks", "workflow.execution")?,
            "workflow.execution.tasks",
        )? {
            self.object(t, "a task of workflow.execution.tasks")?;
            let id = self.string_member(t, &["id"], "a task of workflow.execution.tasks")?;
            let r = self.runtime(t, &["runtimeInSeconds"], id)?;
            if runtimes.insert(id, (r, t.at)).is_some() {
                return Err((self.err)(
                    t.at,
                    format!("a second execution of task \"{id}\" in workflow.execution.tasks"),
                ));
            }
        }
        let mut jobs = WorkflowJobs::with_capacity("task", tasks.len());
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(tasks.len());
        let mut refs = Vec::new();
        for t in tasks {
            self.object(t, "a task of workflow.specification.tasks")?;
            let id = self.string_member(t, &["id"], "a task of workflow.specification.tasks")?;
            let j = jobs.ids.len();
            if index.insert(id, j).is_some() {
                return Err((self.err)(t.at, format!("a second task with id \"{id}\"")));
            }
            let (r, _) = runtimes.get(id).copied().ok_or_else(|| {
                (self.err)(
                    t.at,
                    format!(
                        "task \"{id}\" has no entry in workflow.execution.tasks, so no runtime"
                    ),
                )
            })?;
            let what = format!("task \"{id}\"");
            let mut reads = Vec::new();
            for f in self.list(t, "inputFiles", &what)? {
                let name = self.string(f, &format!("an input file of {what}"))?;
                if !sizes.contains_key(name) {
                    return Err(self.unlisted(f, &what, "reads", name));
                }
                reads.push(name.to_string());
            }
            let mut writes = HashMap::new();
            for f in self.list(t, "outputFiles", &what)? {
                let name = self.string(f, &format!("an output file of {what}"))?;
                let &size = sizes
                    .get(name)
                    .ok_or_else(|| self.unlisted(f, &what, "writes", name))?;
                writes.insert(name.to_string(), size);
            }
            self.refs(t, j, &what, &mut refs)?;
            jobs.ids.push(id.to_string());
            jobs.at.push(t.at);
            jobs.runtime.push(r);
            jobs.reads.push(reads);
            jobs.writes.push(writes);
        }
        if let Some((id, &(_, at))) = runtimes
            .iter()
            .filter(|(id, _)| !index.contains_key(*id))
            .min_by_key(|(_, v)| v.1)
        {
            return Err((self.err)(
                at,
                format!("workflow.execution.tasks has task \"{id}\", which workflow.specification.tasks does not"),
            ));
        }
        self.resolve(&mut jobs, &index, &HashMap::new(), &refs, "id")?;
        Ok(jobs)
    }

    fn unlisted(&self, f: &Node, what: &str, verb: &str, name: &str) -> Error {
        (self.err)(
            f.at,
            format!(
                "{what} {verb} file \"{name}\", which workflow.specification.files does not list"
            ),
        )
    }

    /// Schemas up to 1.4: `workflow.tasks` (or `jobs`) with their runtimes and files.
    fn schema_14(&self, workflow: &Node) -> Result<WorkflowJobs, Error> {
        let (key, list) = match (workflow.get("tasks"), workflow.get("jobs")) {
            (Some(t), _) => ("tasks", t),
            (None, Some(j)) => ("jobs", j),
            (None, None) => {
                return Err((self.err)(
                    workflow.at,
                    "workflow has no \"specification\" (schema 1.5) nor \"tasks\" (earlier schemas) member (is this a WfCommons instance?)".into(),
                ))
            }
        };
        let tasks = self.array(list, &format!("workflow.{key}"))?;
        self.some(list, tasks, &format!("workflow.{key}"))?;
        let mut jobs = WorkflowJobs::with_capacity("task", tasks.len());
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(tasks.len());
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        let mut refs = Vec::new();
        let item = format!("a task of workflow.{key}");
        for t in tasks {
            self.object(t, &item)?;
            let name = self.string_member(t, &["name"], &item)?;
            let j = jobs.ids.len();
            if index.insert(name, j).is_some() {
                return Err((self.err)(t.at, format!("a second task named \"{name}\"")));
            }
            if let Some(id) = t.get("id") {
                let id_str = self.string(id, &format!("the \"id\" of task \"{name}\""))?;
                if by_id.insert(id_str, j).is_some() {
                    return Err((self.err)(
                        id.at,
                        format!("a second task with id \"{id_str}\""),
                    ));
                }
            }
            let r = self.runtime(t, &["runtimeInSeconds", "runtime"], name)?;
            let what = format!("task \"{name}\"");
            let mut reads = Vec::new();
            let mut writes = HashMap::new();
            for f in self.list(t, "files", &what)? {
                let fw = format!("a file of {what}");
                self.object(f, &fw)?;
                let file = self.string_member(f, &["name", "id"], &fw)?;
                let link =
                    self.string_member(f, &["link"], &format!("file \"{file}\" of {what}"))?;
                let size = match ["sizeInBytes", "size"].iter().find_map(|k| f.get(k)) {
                    Some(v) => self.size(v, file)?,
                    None => 0,
                };
                if link.eq_ignore_ascii_case("input") {
                    reads.push(file.to_string());
                } else if link.eq_ignore_ascii_case("output") {
                    writes.insert(file.to_string(), size);
                } else {
                    let at = f.get("link").map_or(f.at, |v| v.at);
                    return Err((self.err)(
                        at,
                        format!("the link of file \"{file}\" of {what} is \"{link}\", not input or output"),
                    ));
                }
            }
            self.refs(t, j, &what, &mut refs)?;
            jobs.ids.push(name.to_string());
            jobs.at.push(t.at);
            jobs.runtime.push(r);
            jobs.reads.push(reads);
            jobs.writes.push(writes);
        }
        self.resolve(&mut jobs, &index, &by_id, &refs, "name or id")?;
        Ok(jobs)
    }

    /// Collects the `parents` and `children` of task `j`.
    fn refs<'t>(
        &self,
        t: &'t Node,
        j: usize,
        what: &str,
        refs: &mut Vec<Ref<'t>>,
    ) -> Result<(), Error> {
        for (key, parent) in [("parents", true), ("children", false)] {
            for p in self.list(t, key, what)? {
                let name = self.string(p, &format!("an entry of the \"{key}\" of {what}"))?;
                refs.push(Ref {
                    task: j,
                    name,
                    parent,
                    at: p.at,
                });
            }
        }
        Ok(())
    }

    /// Turns the references into arcs: a name first, else an id.
    fn resolve(
        &self,
        jobs: &mut WorkflowJobs,
        index: &HashMap<&str, usize>,
        by_id: &HashMap<&str, usize>,
        refs: &[Ref],
        key: &str,
    ) -> Result<(), Error> {
        jobs.arcs.reserve(refs.len());
        for r in refs {
            let Some(&other) = index.get(r.name).or_else(|| by_id.get(r.name)) else {
                return Err((self.err)(
                    r.at,
                    format!(
                        "task \"{}\" lists \"{}\" as a {}, but no task has that {}",
                        jobs.ids[r.task],
                        r.name,
                        if r.parent { "parent" } else { "child" },
                        key
                    ),
                ));
            };
            jobs.arcs.push(if r.parent {
                (other, r.task, r.at)
            } else {
                (r.task, other, r.at)
            });
        }
        Ok(())
    }
}
