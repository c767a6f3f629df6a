//! WfCommons workflow instances (JSON, the format of the WfInstances traces and of WfGen's
//! synthetic workflows) as TTIGHa programs, like Pegasus DAX workflows
//! ([`crate::hetero::io::dax::parse_dax_program`]).
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
//! reads. Members this reader does not know are ignored; one it knows given twice in an
//! object is an error.
//!
//! The text is read with serde_json one level at a time: each value the reader looks at
//! is a [`RawValue`], a slice of the text, so it knows where the value starts, and every
//! error names `file:line:column` of the value that is wrong (of the object, for a missing
//! member; where serde_json stopped, for a syntax error). serde_json checks the values it
//! skips without recursion, and never goes more than one level deep here, so its recursion
//! limit (128 levels) is not reached and no nesting can overflow the stack.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::error::Error;
use crate::hetero::io::dax::{offset_error, WorkflowJobs};
use crate::hetero::io::stg::check_slowness;
use crate::hetero::io::ttig::with_text;
use crate::hetero::ttigha::{time_value, Platform, Ttigha, NEGATIVE_HINT};

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
            crate::hetero::io::dax::parse_dax_program(
                text,
                path,
                platform,
                slowness,
                negative_as_zero,
            )
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
    let r = Reader {
        text,
        err: &err,
        negative_as_zero,
    };
    let root: &RawValue = serde_json::from_str(text).map_err(|e| r.json_error(text, &e))?;
    let instance: Instance = r.object(root, "the instance")?;
    let wf = r.member(instance.workflow, root, "workflow", "the instance")?;
    let workflow: Workflow = r.object(wf, "workflow")?;
    let jobs = match workflow.specification.0 {
        Some(spec) => r.schema_15(&workflow, wf, spec)?,
        None => r.schema_14(&workflow, wf)?,
    };
    jobs.program(platform, slowness, &err)
}

/// A member of an object: its value (`null` included), `None` when it is missing.
#[derive(Clone, Copy, Default)]
struct Member<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|v| Member(Some(v)))
    }
}

/// The root object.
#[derive(Default, Deserialize)]
#[serde(default, bound(deserialize = "'de: 'a"))]
struct Instance<'a> {
    workflow: Member<'a>,
}

/// `workflow`: `specification` and `execution` (1.5), or `tasks` or `jobs` (earlier).
#[derive(Default, Deserialize)]
#[serde(default, bound(deserialize = "'de: 'a"))]
struct Workflow<'a> {
    specification: Member<'a>,
    execution: Member<'a>,
    tasks: Member<'a>,
    jobs: Member<'a>,
}

/// `workflow.specification` (tasks and files) or `workflow.execution` (tasks).
#[derive(Default, Deserialize)]
#[serde(default, bound(deserialize = "'de: 'a"))]
struct Section<'a> {
    tasks: Member<'a>,
    files: Member<'a>,
}

/// A task of `workflow.specification.tasks`, `workflow.execution.tasks` or (before 1.5)
/// `workflow.tasks`: each layout reads its own members.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase", bound(deserialize = "'de: 'a"))]
struct Task<'a> {
    id: Member<'a>,
    name: Member<'a>,
    runtime_in_seconds: Member<'a>,
    runtime: Member<'a>,
    parents: Member<'a>,
    children: Member<'a>,
    input_files: Member<'a>,
    output_files: Member<'a>,
    files: Member<'a>,
}

/// A file of `workflow.specification.files`, or of a task's `files` before 1.5.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase", bound(deserialize = "'de: 'a"))]
struct File<'a> {
    id: Member<'a>,
    name: Member<'a>,
    link: Member<'a>,
    size_in_bytes: Member<'a>,
    size: Member<'a>,
}

/// A string, borrowed from the text unless it holds an escape.
#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

/// What kind of value `v` is, for error messages.
fn kind(v: &RawValue) -> &'static str {
    match v.get().as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// The text of `v` if it is a number (serde_json has checked its grammar).
fn number(v: &RawValue) -> Option<&str> {
    matches!(v.get().as_bytes().first(), Some(b'-' | b'0'..=b'9')).then(|| v.get())
}

/// The first of the named `members` that is present, with its name.
fn first<'m, 'a>(members: &[(&'m str, Member<'a>)]) -> Option<(&'m str, &'a RawValue)> {
    members.iter().find_map(|&(k, m)| m.0.map(|v| (k, v)))
}

/// The names of `members`, for an error that none is present.
fn names(members: &[(&str, Member)]) -> String {
    let names: Vec<&str> = members.iter().map(|&(k, _)| k).collect();
    names.join("\" or \"")
}

/// Reads the values of an instance, turning wrong ones into placed errors.
struct Reader<'a, 'e> {
    /// The whole instance: every value read is a slice of it.
    text: &'a str,
    err: &'e dyn Fn(usize, String) -> Error,
    negative_as_zero: bool,
}

/// A reference to a task (a parent or a child), resolved once every task is read.
struct Ref<'a> {
    /// The task whose list holds the reference.
    task: usize,
    name: Cow<'a, str>,
    /// Whether the reference names a parent (else a child).
    parent: bool,
    at: usize,
}

impl<'a> Reader<'a, '_> {
    /// The byte offset in the text where `s`, a slice of it, starts.
    fn offset(&self, s: &str) -> usize {
        s.as_ptr() as usize - self.text.as_ptr() as usize
    }

    /// An error at the start of `v`.
    fn fail(&self, v: &RawValue, message: String) -> Error {
        (self.err)(self.offset(v.get()), message)
    }

    /// `e`, met reading `within` (a slice of the text), at its place in the text.
    /// serde_json counts lines from 1 and columns in bytes from 1 (0: before the line's
    /// first byte).
    fn json_error(&self, within: &str, e: &serde_json::Error) -> Error {
        let line_start = match e.line() {
            0 | 1 => 0,
            l => within
                .match_indices('\n')
                .nth(l - 2)
                .map_or(within.len(), |(i, _)| i + 1),
        };
        let at = self.offset(within) + line_start + e.column().saturating_sub(1);
        let full = e.to_string();
        let place = format!(" at line {} column {}", e.line(), e.column());
        let what = full.strip_suffix(&place).unwrap_or(&full);
        let hint = if e.is_eof() { " (truncated?)" } else { "" };
        (self.err)(at, format!("JSON: {what}{hint}"))
    }

    /// `v` read as a `T`.
    fn parse<T: Deserialize<'a>>(&self, v: &'a RawValue) -> Result<T, Error> {
        serde_json::from_str(v.get()).map_err(|e| self.json_error(v.get(), &e))
    }

    /// The members of the object `v`.
    fn object<T: Deserialize<'a>>(&self, v: &'a RawValue, what: &str) -> Result<T, Error> {
        if !v.get().starts_with('{') {
            return Err(self.fail(v, format!("{what} is {}, not an object", kind(v))));
        }
        self.parse(v)
    }

    /// The member `key` of the object `of`, which must be there.
    fn member(
        &self,
        m: Member<'a>,
        of: &RawValue,
        key: &str,
        what: &str,
    ) -> Result<&'a RawValue, Error> {
        m.0.ok_or_else(|| {
            self.fail(
                of,
                format!("{what} has no \"{key}\" member (is this a WfCommons instance?)"),
            )
        })
    }

    /// The elements of the array `v`.
    fn array(&self, v: &'a RawValue, what: &str) -> Result<Vec<&'a RawValue>, Error> {
        if !v.get().starts_with('[') {
            return Err(self.fail(v, format!("{what} is {}, not an array", kind(v))));
        }
        self.parse(v)
    }

    /// An optional array member (missing or null: empty).
    fn list(&self, m: Member<'a>, key: &str, what: &str) -> Result<Vec<&'a RawValue>, Error> {
        match m.0 {
            None => Ok(Vec::new()),
            Some(v) if v.get() == "null" => Ok(Vec::new()),
            Some(v) => self.array(v, &format!("\"{key}\" of {what}")),
        }
    }

    /// Errors when the task list `tasks` (the value `list`) is empty.
    fn some(&self, list: &RawValue, tasks: &[&RawValue], what: &str) -> Result<(), Error> {
        if tasks.is_empty() {
            return Err(self.fail(list, format!("{what} is empty: the workflow has no task")));
        }
        Ok(())
    }

    fn string(&self, v: &'a RawValue, what: &str) -> Result<Cow<'a, str>, Error> {
        if !v.get().starts_with('"') {
            return Err(self.fail(v, format!("{what} is {}, not a string", kind(v))));
        }
        self.parse::<Text>(v).map(|t| t.0)
    }

    /// The first of `members` present in the object `of`, as a string.
    fn string_member(
        &self,
        of: &RawValue,
        members: &[(&str, Member<'a>)],
        what: &str,
    ) -> Result<Cow<'a, str>, Error> {
        match first(members) {
            Some((k, v)) => self.string(v, &format!("the \"{k}\" of {what}")),
            None => Err(self.fail(of, format!("{what} has no \"{}\" member", names(members)))),
        }
    }

    /// The runtime in the first of `members` present in the object `of`: a finite real
    /// `>= 0`.
    fn runtime(
        &self,
        of: &RawValue,
        members: &[(&str, Member<'a>)],
        task: &str,
    ) -> Result<f64, Error> {
        let Some((key, v)) = first(members) else {
            return Err(self.fail(
                of,
                format!("task \"{task}\" has no \"{}\" member", names(members)),
            ));
        };
        let Some(t) = number(v) else {
            return Err(self.fail(
                v,
                format!(
                    "the \"{key}\" of task \"{task}\" is {}, not a number",
                    kind(v)
                ),
            ));
        };
        match (time_value(t), t.parse::<f64>().ok()) {
            (Some(x), _) => Ok(x),
            (None, Some(x)) if x.is_finite() && self.negative_as_zero => Ok(0.0),
            (None, Some(x)) if x.is_finite() => Err(self.fail(
                v,
                format!("the runtime of task \"{task}\" is {t}, below 0 {NEGATIVE_HINT}"),
            )),
            _ => Err(self.fail(
                v,
                format!("the runtime of task \"{task}\" is {t}, beyond the largest float"),
            )),
        }
    }

    /// A file size: an integer `>= 0` (written with or without a fraction or exponent).
    fn size(&self, v: &RawValue, file: &str) -> Result<u64, Error> {
        let Some(t) = number(v) else {
            return Err(self.fail(
                v,
                format!("the size of file \"{file}\" is {}, not a number", kind(v)),
            ));
        };
        if let Ok(s) = t.parse::<u64>() {
            return Ok(s);
        }
        let x = t.parse::<f64>().unwrap_or(f64::INFINITY);
        if x < 0.0 && x.is_finite() {
            return if self.negative_as_zero {
                Ok(0)
            } else {
                Err(self.fail(
                    v,
                    format!("the size of file \"{file}\" is {t}, below 0 {NEGATIVE_HINT}"),
                ))
            };
        }
        if x.fract() == 0.0 && x < 1.8e19 {
            return Ok(x as u64);
        }
        Err(self.fail(
            v,
            format!("the size of file \"{file}\" is {t}, not an integer of at most 64 bits"),
        ))
    }

    /// Schema 1.5: specification (tasks, files) and execution (runtimes).
    fn schema_15(
        &self,
        workflow: &Workflow<'a>,
        wf: &RawValue,
        spec_value: &'a RawValue,
    ) -> Result<WorkflowJobs, Error> {
        let spec: Section = self.object(spec_value, "workflow.specification")?;
        let list = self.member(spec.tasks, spec_value, "tasks", "workflow.specification")?;
        let tasks = self.array(list, "workflow.specification.tasks")?;
        self.some(list, &tasks, "workflow.specification.tasks")?;
        let mut sizes: HashMap<Cow<str>, u64> = HashMap::new();
        for f in self.list(spec.files, "files", "workflow.specification")? {
            let file: File = self.object(f, "a file of workflow.specification.files")?;
            let id = self.string_member(f, &[("id", file.id)], "a file")?;
            let size = match file.size_in_bytes.0 {
                Some(v) => self.size(v, &id)?,
                None => 0,
            };
            if sizes.contains_key(&id) {
                return Err(self.fail(f, format!("a second file with id \"{id}\"")));
            }
            sizes.insert(id, size);
        }
        let execution_value = self.member(workflow.execution, wf, "execution", "workflow")?;
        let execution: Section = self.object(execution_value, "workflow.execution")?;
        let mut runtimes: HashMap<Cow<str>, (f64, usize)> = HashMap::new();
        for t in self.array(
            self.member(
                execution.tasks,
                execution_value,
                "tasks",
                "workflow.execution",
            )?,
            "workflow.execution.tasks",
        )? {
            let what = "a task of workflow.execution.tasks";
            let task: Task = self.object(t, what)?;
            let id = self.string_member(t, &[("id", task.id)], what)?;
            let r = self.runtime(t, &[("runtimeInSeconds", task.runtime_in_seconds)], &id)?;
            if runtimes.contains_key(&id) {
                return Err(self.fail(
                    t,
                    format!("a second execution of task \"{id}\" in workflow.execution.tasks"),
                ));
            }
            runtimes.insert(id, (r, self.offset(t.get())));
        }
        let mut jobs = WorkflowJobs::with_capacity("task", tasks.len());
        let mut index: HashMap<Cow<str>, usize> = HashMap::with_capacity(tasks.len());
        let mut refs = Vec::new();
        for t in tasks {
            let item = "a task of workflow.specification.tasks";
            let task: Task = self.object(t, item)?;
            let id = self.string_member(t, &[("id", task.id)], item)?;
            let j = jobs.ids.len();
            if index.insert(id.clone(), j).is_some() {
                return Err(self.fail(t, format!("a second task with id \"{id}\"")));
            }
            let (r, _) = runtimes.get(&id).copied().ok_or_else(|| {
                self.fail(
                    t,
                    format!(
                        "task \"{id}\" has no entry in workflow.execution.tasks, so no runtime"
                    ),
                )
            })?;
            let what = format!("task \"{id}\"");
            let mut reads = Vec::new();
            for f in self.list(task.input_files, "inputFiles", &what)? {
                let name = self.string(f, &format!("an input file of {what}"))?;
                if !sizes.contains_key(&name) {
                    return Err(self.unlisted(f, &what, "reads", &name));
                }
                reads.push(name.into_owned());
            }
            let mut writes = HashMap::new();
            for f in self.list(task.output_files, "outputFiles", &what)? {
                let name = self.string(f, &format!("an output file of {what}"))?;
                let &size = sizes
                    .get(&name)
                    .ok_or_else(|| self.unlisted(f, &what, "writes", &name))?;
                writes.insert(name.into_owned(), size);
            }
            self.refs(&task, j, &what, &mut refs)?;
            jobs.ids.push(id.into_owned());
            jobs.at.push(self.offset(t.get()));
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

    fn unlisted(&self, f: &RawValue, what: &str, verb: &str, name: &str) -> Error {
        self.fail(
            f,
            format!(
                "{what} {verb} file \"{name}\", which workflow.specification.files does not list"
            ),
        )
    }

    /// Schemas up to 1.4: `workflow.tasks` (or `jobs`) with their runtimes and files.
    fn schema_14(&self, workflow: &Workflow<'a>, wf: &RawValue) -> Result<WorkflowJobs, Error> {
        let (key, list) = match (workflow.tasks.0, workflow.jobs.0) {
            (Some(t), _) => ("tasks", t),
            (None, Some(j)) => ("jobs", j),
            (None, None) => {
                return Err(self.fail(
                    wf,
                    "workflow has no \"specification\" (schema 1.5) nor \"tasks\" (earlier schemas) member (is this a WfCommons instance?)".into(),
                ))
            }
        };
        let tasks = self.array(list, &format!("workflow.{key}"))?;
        self.some(list, &tasks, &format!("workflow.{key}"))?;
        let mut jobs = WorkflowJobs::with_capacity("task", tasks.len());
        let mut index: HashMap<Cow<str>, usize> = HashMap::with_capacity(tasks.len());
        let mut by_id: HashMap<Cow<str>, usize> = HashMap::new();
        let mut refs = Vec::new();
        let item = format!("a task of workflow.{key}");
        for t in tasks {
            let task: Task = self.object(t, &item)?;
            let name = self.string_member(t, &[("name", task.name)], &item)?;
            let j = jobs.ids.len();
            if index.insert(name.clone(), j).is_some() {
                return Err(self.fail(t, format!("a second task named \"{name}\"")));
            }
            if let Some(id) = task.id.0 {
                let id_str = self.string(id, &format!("the \"id\" of task \"{name}\""))?;
                if by_id.contains_key(&id_str) {
                    return Err(self.fail(id, format!("a second task with id \"{id_str}\"")));
                }
                by_id.insert(id_str, j);
            }
            let r = self.runtime(
                t,
                &[
                    ("runtimeInSeconds", task.runtime_in_seconds),
                    ("runtime", task.runtime),
                ],
                &name,
            )?;
            let what = format!("task \"{name}\"");
            let mut reads = Vec::new();
            let mut writes = HashMap::new();
            for f in self.list(task.files, "files", &what)? {
                let fw = format!("a file of {what}");
                let file: File = self.object(f, &fw)?;
                let file_name =
                    self.string_member(f, &[("name", file.name), ("id", file.id)], &fw)?;
                let link = self.string_member(
                    f,
                    &[("link", file.link)],
                    &format!("file \"{file_name}\" of {what}"),
                )?;
                let size = match first(&[("sizeInBytes", file.size_in_bytes), ("size", file.size)])
                {
                    Some((_, v)) => self.size(v, &file_name)?,
                    None => 0,
                };
                if link.eq_ignore_ascii_case("input") {
                    reads.push(file_name.into_owned());
                } else if link.eq_ignore_ascii_case("output") {
                    writes.insert(file_name.into_owned(), size);
                } else {
                    return Err(self.fail(
                        file.link.0.unwrap_or(f),
                        format!("the link of file \"{file_name}\" of {what} is \"{link}\", not input or output"),
                    ));
                }
            }
            self.refs(&task, j, &what, &mut refs)?;
            jobs.ids.push(name.into_owned());
            jobs.at.push(self.offset(t.get()));
            jobs.runtime.push(r);
            jobs.reads.push(reads);
            jobs.writes.push(writes);
        }
        self.resolve(&mut jobs, &index, &by_id, &refs, "name or id")?;
        Ok(jobs)
    }

    /// Collects the `parents` and `children` of task `j`.
    fn refs(
        &self,
        task: &Task<'a>,
        j: usize,
        what: &str,
        refs: &mut Vec<Ref<'a>>,
    ) -> Result<(), Error> {
        for (key, parent, list) in [
            ("parents", true, task.parents),
            ("children", false, task.children),
        ] {
            for p in self.list(list, key, what)? {
                let name = self.string(p, &format!("an entry of the \"{key}\" of {what}"))?;
                refs.push(Ref {
                    task: j,
                    name,
                    parent,
                    at: self.offset(p.get()),
                });
            }
        }
        Ok(())
    }

    /// Turns the references into arcs: a name first, else an id.
    fn resolve(
        &self,
        jobs: &mut WorkflowJobs,
        index: &HashMap<Cow<str>, usize>,
        by_id: &HashMap<Cow<str>, usize>,
        refs: &[Ref],
        key: &str,
    ) -> Result<(), Error> {
        jobs.arcs.reserve(refs.len());
        for r in refs {
            let name: &str = &r.name;
            let Some(&other) = index.get(name).or_else(|| by_id.get(name)) else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hetero::io::ttig::parse_platform;

    fn read(text: &str) -> Result<Ttigha, String> {
        let platform = parse_platform("PROCTYPE p 2\nCOMM lan 1 1\nLINK * * lan\n", Path::new("p"));
        parse_wfcommons_program(text, Path::new("w.json"), platform.unwrap(), &[1.0], false)
            .map_err(|e| e.to_string())
    }

    /// Tasks `a` and `b` before schema 1.5, `a` the parent of `b`, whose members end with
    /// `extra` on the third line.
    fn instance(extra: &str) -> String {
        format!(
            "{{\"workflow\": {{\"tasks\": [\n {{\"name\": \"a\", \"runtime\": 1}},\n {{\"name\": \"b\", \"parents\": [\"a\"]{extra}}}\n]}}}}"
        )
    }

    #[test]
    fn syntax_errors_have_places() {
        for (text, want) in [
            ("", "1:1: JSON: EOF while parsing a value (truncated?)"),
            ("{\"a\" 1}", "1:6: JSON: expected `:`"),
            ("[1, 2", "1:5: JSON: EOF while parsing a list (truncated?)"),
            ("[01]", "1:3: JSON: invalid number"),
            ("{\"a\": tru}", "1:10: JSON: expected ident"),
            ("{} 2", "1:4: JSON: trailing characters"),
            ("{\n\"a\": [1,\n 2 3]}", "3:4: JSON: expected `,` or `]`"),
        ] {
            assert_eq!(
                read(text).err().as_deref(),
                Some(&*format!("w.json:{want}")),
                "{text}"
            );
        }
    }

    /// An error inside a value read on its own (a string, an object's members) is placed
    /// in the whole text.
    #[test]
    fn errors_within_a_value_have_places_in_the_text() {
        for (extra, want) in [
            (
                ", \"runtime\": null",
                "3:45: the \"runtime\" of task \"b\" is null, not a number",
            ),
            (
                ", \"runtime\": 2, \"runtime\": 3",
                "3:56: JSON: duplicate field `runtime`",
            ),
            (
                ", \"runtime\": 2, \"id\": \"x\\ud800\"",
                "3:62: JSON: unexpected end of hex escape",
            ),
            (
                ", \"runtime\": 2, \"children\": [[\"a\"]]",
                "3:61: an entry of the \"children\" of task \"b\" is an array, not a string",
            ),
        ] {
            let e = read(&instance(extra)).unwrap_err();
            assert_eq!(e, format!("w.json:{want}"), "{extra}");
        }
    }

    #[test]
    fn escapes_are_read_and_nesting_is_not_limited() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let text = instance(&format!(", \"runtime\": 2, \"x\": {deep}")).replacen(
            "\"a\"",
            "\"\\u0061\"",
            1,
        );
        let m = read(&text).unwrap();
        assert_eq!(m.program.task_names, ["a", "b"]);
        assert_eq!(m.program.messages.len(), 1);
    }
}
