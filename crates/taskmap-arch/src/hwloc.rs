//! hwloc topologies: the XML that `lstopo --of xml` writes (hwloc 2.x, and 1.x's nesting of
//! NUMA nodes), synthetic ones included (`lstopo -i "package:2 core:8 pu:2" --of xml`).
//!
//! The levels are the objects of types Package, Die, L3Cache, Core and PU, and Groups
//! with NUMA nodes attached (NUMA domains). PUs outside the root's `allowed_cpuset` are
//! left out, and so are cores with no PU left. Other objects (L1, L2, groups without
//! memory, I/O and Misc objects) do not make levels.

use std::collections::HashMap;
use std::path::Path;

use crate::explicit::read_input;
use crate::machine::{
    default_distances, LevelKind, Machine, MachineBuilder, Site, MAX_MACHINE_PES,
};
use crate::ArchError;

/// Most objects read from one file.
const MAX_OBJECTS: usize = 1 << 22;

/// The options of an `hwloc:` spec.
#[derive(Clone, Debug, Default)]
struct Options {
    /// PEs are PUs (`pe=pu`) rather than cores.
    pe_is_pu: bool,
    /// Distances given per level kind.
    dists: Vec<(LevelKind, u64)>,
}

/// `hwloc:FILE[,pe=core|pu][,LEVEL=DIST...]`: the topology of one node, or of every node
/// `names` (the expanded node list; one file for all, or `FILE` with `%n` for the node's name, or a directory of
/// `NAME.xml` files).
pub(crate) fn parse_hwloc_spec(
    rest: &str,
    spec: &str,
    names: Option<&[String]>,
) -> Result<Machine, ArchError> {
    let (file, opts) = if Path::new(rest).is_file() {
        (rest, Options::default())
    } else {
        let mut it = rest.split(',');
        let file = it.next().unwrap_or("");
        let mut o = Options::default();
        for kv in it {
            let (k, v) = kv.split_once('=').ok_or_else(|| {
                ArchError::spec(
                    spec,
                    format!("expected KEY=VALUE after the file name, not \"{kv}\""),
                )
            })?;
            let k = k.trim();
            if k.eq_ignore_ascii_case("pe") {
                o.pe_is_pu = match LevelKind::parse(v) {
                    Some(LevelKind::Core) => false,
                    Some(LevelKind::Pu) => true,
                    _ => {
                        return Err(ArchError::spec(
                            spec,
                            format!("pe={v}: expected pe=core or pe=pu"),
                        ))
                    }
                };
                continue;
            }
            let kind = LevelKind::parse(k).ok_or_else(|| {
                ArchError::spec(
                    spec,
                    format!("unknown key \"{k}\" (expected pe, or a level: node, package, die, numa, l3, core, pu)"),
                )
            })?;
            let d: u64 = v.trim().parse().ok().filter(|&d| d > 0).ok_or_else(|| {
                ArchError::spec(spec, format!("distance {k}={v} is not a positive integer"))
            })?;
            o.dists.push((kind, d));
        }
        (file, o)
    };
    if file.is_empty() {
        return Err(ArchError::spec(spec, "missing file name"));
    }
    let per_node = file.contains("%n") || Path::new(file).is_dir();
    let mut tops: Vec<Topology> = Vec::new();
    match &names {
        Some(names) if per_node => {
            for n in names.iter() {
                let path = if file.contains("%n") {
                    file.replace("%n", n)
                } else {
                    Path::new(file)
                        .join(format!("{n}.xml"))
                        .display()
                        .to_string()
                };
                tops.push(Topology::read(&path, opts.pe_is_pu)?);
            }
        }
        None if per_node => {
            return Err(ArchError::spec(
                spec,
                "one file per node (a directory or %n in the name) needs a node list (--nodes)",
            ))
        }
        _ => tops.push(Topology::read(file, opts.pe_is_pu)?),
    }
    let node_count = names.as_ref().map_or(1, |n| n.len());
    let pes: usize = match tops.len() {
        1 => tops[0].sites.len().saturating_mul(node_count),
        _ => tops.iter().map(|t| t.sites.len()).sum(),
    };
    if pes > MAX_MACHINE_PES {
        return Err(ArchError::spec(
            spec,
            format!("{pes} PEs on {node_count} node(s): at most {MAX_MACHINE_PES}"),
        ));
    }
    // The order of the levels, from every chain.
    let mut order: Vec<LevelKind> = Vec::new();
    for t in &tops {
        for chain in &t.chains {
            for (j, &(k, _, _)) in chain.iter().enumerate() {
                if !order.contains(&k) {
                    let at = match j {
                        0 => 0,
                        _ => order.iter().position(|&x| x == chain[j - 1].0).unwrap() + 1,
                    };
                    order.insert(at, k);
                }
            }
        }
    }
    for t in &tops {
        for chain in &t.chains {
            let pos: Vec<usize> = chain
                .iter()
                .map(|(k, _, _)| order.iter().position(|x| x == k).unwrap())
                .collect();
            if let Some(w) = pos.windows(2).find(|w| w[0] >= w[1]) {
                return Err(ArchError::FileContent {
                    file: t.file.clone(),
                    msg: format!(
                        "the levels are nested differently in different places ({} above {} here, below it elsewhere)",
                        order[w[0]].name(),
                        order[w[1]].name()
                    ),
                });
            }
        }
    }
    let mut levels = order.clone();
    if names.is_some() {
        levels.insert(0, LevelKind::Node);
    }
    let given = |k: LevelKind| opts.dists.iter().rev().find(|(x, _)| *x == k).map(|x| x.1);
    let dists = default_distances(&levels, given);
    let hosts: Vec<String> = match &names {
        Some(n) => n.to_vec(),
        None => vec![tops[0]
            .hostname
            .clone()
            .unwrap_or_else(|| "localhost".to_string())],
    };
    let mut all_digits = Vec::with_capacity(pes * levels.len());
    let mut sites = Vec::with_capacity(pes);
    let mut digits = vec![0u32; levels.len()];
    for node in 0..node_count {
        let t = if tops.len() == 1 {
            &tops[0]
        } else {
            &tops[node]
        };
        for (chain, site) in t.chains.iter().zip(&t.sites) {
            digits.fill(0);
            let off = usize::from(names.is_some());
            if off == 1 {
                digits[0] = node as u32;
            }
            // A level this PE skips (cores beside an L3 rather than under one) counts as
            // one more object of that level under the object above.
            let mut above = usize::MAX;
            for (j, &k) in order.iter().enumerate() {
                digits[off + j] = match chain.iter().find(|l| l.0 == k) {
                    Some(&(_, d, obj)) => {
                        above = obj;
                        d
                    }
                    None => t.real.get(&(above, k)).copied().unwrap_or(0),
                };
            }
            let mut site = site.clone();
            site.host = node as u32;
            all_digits.extend_from_slice(&digits);
            sites.push(site);
        }
    }
    let what = format!("the topology {file}");
    MachineBuilder {
        levels,
        dists,
        hosts,
        digits: all_digits,
        sites,
        pe_is_pu: opts.pe_is_pu,
    }
    .build(&what)
    .map_err(|e| e.in_spec(spec))
}

/// An hwloc object as read.
struct Obj {
    kind: Option<LevelKind>,
    is_pu: bool,
    is_core: bool,
    is_package: bool,
    /// A NUMANode object (hwloc 2: memory, no children; hwloc 1: holds CPUs).
    numa_node: bool,
    /// A memory object (NUMANode, MemCache), which holds no PU in hwloc 2.
    memory: bool,
    /// A Group object.
    group: bool,
    os_index: Option<u32>,
    parent: usize,
    /// Byte offset of its element, for errors.
    pos: usize,
}

/// A level object above a PE: its kind, its index among the objects of its kind under the
/// next level object above it, and its object.
type Link = (LevelKind, u32, usize);

/// The PEs of one file: their chains of level objects, top-down, and sites.
struct Topology {
    file: String,
    hostname: Option<String>,
    chains: Vec<Vec<Link>>,
    sites: Vec<Site>,
    /// How many objects of each level lie under each level object (`usize::MAX`: the
    /// root), the PEs that skip that level taking the next index.
    real: HashMap<(usize, LevelKind), u32>,
}

/// NUMA domains: a hwloc 1 NUMANode holding CPUs is one (a CPU-less one, such as
/// MCDRAM, is none); in hwloc 2 a NUMANode (memory, no children) makes the Group it is
/// attached to one (past memory-side caches); attached to a package, die or cache, the
/// NUMA domain is that level.
fn mark_numa_domains(objs: &mut [Obj], hwloc2: bool) {
    let mut kids = vec![0u32; objs.len()];
    for o in objs.iter() {
        if o.parent != usize::MAX {
            kids[o.parent] += 1;
        }
    }
    for i in 0..objs.len() {
        if !objs[i].numa_node {
            continue;
        }
        if kids[i] > 0 {
            objs[i].kind = Some(LevelKind::Numa);
            continue;
        }
        if !hwloc2 {
            continue;
        }
        let mut p = objs[i].parent;
        while p != usize::MAX && objs[p].memory {
            p = objs[p].parent;
        }
        if p != usize::MAX && objs[p].group && objs[p].kind.is_none() {
            objs[p].kind = Some(LevelKind::Numa);
        }
    }
}

impl Topology {
    fn read(path: &str, pe_is_pu: bool) -> Result<Topology, ArchError> {
        let bytes = read_input(path)?;
        Self::parse(&bytes, path, pe_is_pu)
    }

    fn parse(bytes: &[u8], path: &str, pe_is_pu: bool) -> Result<Topology, ArchError> {
        use quick_xml::events::Event;
        let at = |pos: usize, msg: String| {
            let (l, c) = taskmap_graph::line_col(bytes, pos);
            ArchError::file(path, l as u32, c as u32, msg)
        };
        let mut reader = quick_xml::Reader::from_reader(bytes);
        reader.config_mut().trim_text(true);
        let mut objs: Vec<Obj> = Vec::new();
        // The open elements: Some(object index) for <object>, None for others.
        let mut open: Vec<Option<usize>> = Vec::new();
        let mut allowed: Option<Cpuset> = None;
        let mut hostname: Option<String> = None;
        let mut seen_topology = false;
        let mut hwloc2 = false;
        loop {
            let before = reader.buffer_position() as usize;
            let event = reader
                .read_event()
                .map_err(|e| at(reader.error_position() as usize, format!("XML: {e}")))?;
            let (e, empty) = match &event {
                Event::Start(e) => (e, false),
                Event::Empty(e) => (e, true),
                Event::End(_) => {
                    open.pop();
                    continue;
                }
                Event::Eof if open.is_empty() => break,
                Event::Eof => {
                    return Err(at(
                        bytes.len(),
                        format!(
                            "the file ends inside {} element(s): is it truncated?",
                            open.len()
                        ),
                    ))
                }
                _ => continue,
            };
            let pos = before + bytes[before..].iter().position(|&c| c == b'<').unwrap_or(0);
            let name = e.local_name();
            let name = name.as_ref();
            let attr = |key: &str| -> Result<Option<String>, ArchError> {
                for a in e.attributes() {
                    let a = a.map_err(|x| at(pos, format!("XML attribute: {x}")))?;
                    if a.key.local_name().as_ref() == key.as_bytes() {
                        let v = a
                            .unescape_value()
                            .map_err(|x| at(pos, format!("XML attribute: {x}")))?;
                        return Ok(Some(v.into_owned()));
                    }
                }
                Ok(None)
            };
            let parent_obj = open.iter().rev().find_map(|o| *o);
            let mut pushed = None;
            match name {
                b"topology" => {
                    seen_topology = true;
                    hwloc2 = attr("version")?.is_some_and(|v| {
                        v.split('.')
                            .next()
                            .and_then(|m| m.trim().parse::<u32>().ok())
                            >= Some(2)
                    });
                }
                b"object" => {
                    if !seen_topology {
                        return Err(at(
                            pos,
                            "<object> outside <topology>: not an hwloc XML file".into(),
                        ));
                    }
                    let ty =
                        attr("type")?.ok_or_else(|| at(pos, "<object> without a type".into()))?;
                    let os_index = match attr("os_index")? {
                        Some(s) => Some(s.trim().parse::<u32>().map_err(|_| {
                            at(pos, format!("os_index \"{s}\" is not a 32-bit integer"))
                        })?),
                        None => None,
                    };
                    if objs.len() >= MAX_OBJECTS {
                        return Err(at(pos, format!("more than {MAX_OBJECTS} objects")));
                    }
                    let parent = match parent_obj {
                        Some(p) => p,
                        None if objs.is_empty() => usize::MAX,
                        None => return Err(at(pos, "a second root object".into())),
                    };
                    if parent == usize::MAX {
                        if let Some(s) = attr("allowed_cpuset")? {
                            allowed = Some(Cpuset::parse(&s).ok_or_else(|| {
                                at(
                                    pos,
                                    format!("allowed_cpuset \"{s}\" is not an hwloc bitmap"),
                                )
                            })?);
                        }
                    }
                    let ty_l = ty.to_ascii_lowercase();
                    let numa_node = ty_l == "numanode";
                    let kind = match ty_l.as_str() {
                        "package" | "socket" => Some(LevelKind::Package),
                        "die" => Some(LevelKind::Die),
                        "l3cache" => Some(LevelKind::L3),
                        "cache" if attr("depth")?.as_deref() == Some("3") => Some(LevelKind::L3),
                        "core" => Some(LevelKind::Core),
                        "pu" => Some(LevelKind::Pu),
                        _ => None,
                    };
                    if ty_l == "pu" && os_index.is_none() {
                        return Err(at(pos, "PU without an os_index".into()));
                    }
                    objs.push(Obj {
                        kind,
                        is_pu: ty_l == "pu",
                        is_core: ty_l == "core",
                        is_package: ty_l == "package" || ty_l == "socket",
                        numa_node,
                        memory: numa_node || ty_l == "memcache",
                        group: ty_l == "group",
                        os_index,
                        parent,
                        pos,
                    });
                    pushed = Some(objs.len() - 1);
                }
                b"info"
                    if parent_obj == Some(0) && attr("name")?.as_deref() == Some("HostName") =>
                {
                    hostname = attr("value")?;
                }
                _ => {}
            }
            if !empty {
                open.push(pushed);
            }
        }
        if objs.is_empty() {
            return Err(ArchError::FileContent {
                file: path.to_string(),
                msg: "no <object>: not an hwloc XML topology".into(),
            });
        }
        let n = objs.len();
        mark_numa_domains(&mut objs, hwloc2);
        let is_allowed =
            |o: &Obj| o.is_pu && allowed.as_ref().is_none_or(|a| a.has(o.os_index.unwrap()));
        // PUs left below each object.
        let mut pus = vec![0u32; n];
        for i in (0..n).rev() {
            if is_allowed(&objs[i]) {
                pus[i] += 1;
            }
            let p = objs[i].parent;
            if p != usize::MAX {
                pus[p] += pus[i];
            }
        }
        let has_cores = objs.iter().any(|o| o.is_core);
        if !pe_is_pu && !has_cores {
            return Err(ArchError::FileContent {
                file: path.to_string(),
                msg: "the topology has no Core objects: use hwloc:FILE,pe=pu".into(),
            });
        }
        // Nearest level ancestor, chain and counters, in document (pre-)order.
        let mut chain_of: Vec<Vec<Link>> = Vec::with_capacity(n);
        let mut anchor: Vec<usize> = Vec::with_capacity(n); // nearest level object at or above
        let mut package_of: Vec<usize> = Vec::with_capacity(n);
        let mut core_of: Vec<usize> = Vec::with_capacity(n);
        // The next level index per (anchor, level), the next logical index per (package or
        // core, core or PU).
        let mut next: HashMap<(usize, LevelKind), u32> = HashMap::new();
        let mut logical: HashMap<(usize, LevelKind), u32> = HashMap::new();
        let mut index: Vec<u32> = vec![0; n]; // logical index of packages, cores, PUs
        let (mut packages, mut cpus) = (0u32, 0u32);
        let mut first_cpu: Vec<Option<(u32, u32)>> = vec![None; n]; // (logical, os) of the first PU
        let mut chains = Vec::new();
        let mut sites = Vec::new();
        for i in 0..n {
            let p = objs[i].parent;
            let (up_anchor, up_pkg, up_core) = match p {
                usize::MAX => (usize::MAX, usize::MAX, usize::MAX),
                p => (anchor[p], package_of[p], core_of[p]),
            };
            let mut chain = if up_anchor == usize::MAX {
                Vec::new()
            } else {
                chain_of[up_anchor].clone()
            };
            let mut my_anchor = up_anchor;
            let (mut pkg, mut core) = (up_pkg, up_core);
            let live = pus[i] > 0;
            if let (Some(k), true) = (objs[i].kind, live) {
                if k != LevelKind::Pu || pe_is_pu {
                    if let Some(&(_, _, outer)) = chain.iter().find(|l| l.0 == k) {
                        let (line, _) = taskmap_graph::line_col(bytes, objs[outer].pos);
                        return Err(at(
                            objs[i].pos,
                            format!("a {} inside the {} of line {line}", k.name(), k.name()),
                        ));
                    }
                    let c = next.entry((up_anchor, k)).or_insert(0);
                    chain.push((k, *c, i));
                    *c += 1;
                    my_anchor = i;
                }
            }
            if live && objs[i].is_package {
                index[i] = packages;
                packages += 1;
                pkg = i;
            }
            if live && objs[i].is_core {
                let c = logical.entry((pkg, LevelKind::Core)).or_insert(0);
                index[i] = *c;
                *c += 1;
                core = i;
            }
            if live && objs[i].is_pu {
                let c = logical.entry((core, LevelKind::Pu)).or_insert(0);
                index[i] = *c;
                *c += 1;
                let me = (cpus, objs[i].os_index.unwrap());
                cpus += 1;
                let mut a = i;
                while a != usize::MAX && first_cpu[a].is_none() {
                    first_cpu[a] = Some(me);
                    a = objs[a].parent;
                }
            }
            anchor.push(my_anchor);
            package_of.push(pkg);
            core_of.push(core);
            chain_of.push(chain);
        }
        for i in 0..n {
            let pe = if pe_is_pu {
                objs[i].is_pu
            } else {
                objs[i].is_core
            };
            if !pe || pus[i] == 0 {
                continue;
            }
            let (cpu, os) = first_cpu[i].expect("a PE has a PU");
            chains.push(chain_of[i].clone());
            sites.push(Site {
                host: 0,
                package: if package_of[i] == usize::MAX {
                    0
                } else {
                    index[package_of[i]]
                },
                core: if core_of[i] == usize::MAX {
                    0
                } else {
                    index[core_of[i]]
                },
                pu: if pe_is_pu { index[i] } else { 0 },
                cpu,
                os_cpu: Some(os),
            });
        }
        if sites.is_empty() {
            return Err(ArchError::FileContent {
                file: path.to_string(),
                msg: "no allowed PU: the topology has no PE".into(),
            });
        }
        Ok(Topology {
            file: path.to_string(),
            hostname,
            chains,
            sites,
            real: next,
        })
    }
}

/// An hwloc bitmap: `0x0000000f`, `0xffffffff,0x00000003` (32-bit words, most
/// significant first; an empty word is 0: `0x0000ffff,,0x0000ffff`) or `0xf...f,0x...`
/// (all bits above set).
struct Cpuset {
    /// Least significant word first.
    words: Vec<u32>,
    infinite: bool,
}

impl Cpuset {
    fn parse(s: &str) -> Option<Cpuset> {
        let mut words = Vec::new();
        let mut infinite = false;
        let parts: Vec<&str> = s.trim().split(',').collect();
        for (i, w) in parts.iter().enumerate() {
            let w = w.trim();
            if w.is_empty() && i > 0 {
                words.push(0);
                continue;
            }
            let h = w.strip_prefix("0x")?;
            if h == "f...f" {
                if i != 0 {
                    return None;
                }
                infinite = true;
                continue;
            }
            if h.is_empty() || h.len() > 8 {
                return None;
            }
            words.push(u32::from_str_radix(h, 16).ok()?);
        }
        words.reverse();
        Some(Cpuset { words, infinite })
    }

    fn has(&self, bit: u32) -> bool {
        match self.words.get((bit / 32) as usize) {
            Some(w) => w >> (bit % 32) & 1 == 1,
            None => self.infinite,
        }
    }
}
