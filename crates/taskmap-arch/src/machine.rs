//! Machines as users describe them: an hwloc topology (`hwloc:FILE`), a level list
//! (`nodes:4,package:2,core:8/100,10,1`) and a Slurm node list (`node[01-04]`) above
//! either, with the host, package and core of every PE that launch files need.
//!
//! A machine is a tree of levels. Its PEs are numbered as a [`Tree`] numbers them: the
//! tree with, at each level, the most children any object of that level has (the
//! envelope). When every object has that many, the target is that tree; otherwise (PUs
//! left out, hybrid cores, nodes of different kinds) it is the [`Subset`] of the envelope
//! holding the PEs that exist. The distance of two PEs is the distance of the highest
//! level at which they differ: different nodes, different packages of one node, and so on.

use std::fmt::Write as _;

use crate::{ArchError, Architecture, PeId, Subset, Tree};

/// The kind of a machine level, top-down in their usual nesting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LevelKind {
    /// Nodes of a cluster (the `--nodes` list).
    Node,
    /// Packages (sockets) of a node.
    Package,
    /// Dies of a package (hwloc `Die`).
    Die,
    /// NUMA domains (hwloc: an object with NUMA nodes attached that is no package, die
    /// or cache).
    Numa,
    /// Level-3 cache domains.
    L3,
    /// Cores.
    Core,
    /// Processing units (hardware threads).
    Pu,
}

impl LevelKind {
    /// Every kind, top-down.
    pub const ALL: [LevelKind; 7] = [
        LevelKind::Node,
        LevelKind::Package,
        LevelKind::Die,
        LevelKind::Numa,
        LevelKind::L3,
        LevelKind::Core,
        LevelKind::Pu,
    ];

    /// The name used in specs.
    pub fn name(self) -> &'static str {
        match self {
            LevelKind::Node => "node",
            LevelKind::Package => "package",
            LevelKind::Die => "die",
            LevelKind::Numa => "numa",
            LevelKind::L3 => "l3",
            LevelKind::Core => "core",
            LevelKind::Pu => "pu",
        }
    }

    /// The kind named `s` (case-insensitive; plurals, `socket`, `thread` and `hwthread`
    /// accepted).
    pub fn parse(s: &str) -> Option<LevelKind> {
        let s = s.trim().to_ascii_lowercase();
        let s = s.strip_suffix('s').unwrap_or(&s);
        Some(match s {
            "node" => LevelKind::Node,
            "package" | "socket" => LevelKind::Package,
            "die" => LevelKind::Die,
            "numa" | "numanode" => LevelKind::Numa,
            "l3" | "l3cache" => LevelKind::L3,
            "core" => LevelKind::Core,
            "pu" | "thread" | "hwthread" => LevelKind::Pu,
            _ => return None,
        })
    }

    /// The distance of two PEs that differ first at this level, unless the spec gives
    /// another: node 100, package 20, die 15, NUMA domain 10, L3 5, core 2, PU 1.
    pub fn default_distance(self) -> u64 {
        match self {
            LevelKind::Node => 100,
            LevelKind::Package => 20,
            LevelKind::Die => 15,
            LevelKind::Numa => 10,
            LevelKind::L3 => 5,
            LevelKind::Core => 2,
            LevelKind::Pu => 1,
        }
    }
}

/// The distance of each level (top-down): the one `given`, or the kind's default raised to
/// the distance of the level below it when a level nests unusually (a NUMA domain above
/// the packages costs at least a package crossing).
pub(crate) fn default_distances(
    levels: &[LevelKind],
    given: impl Fn(LevelKind) -> Option<u64>,
) -> Vec<u64> {
    let mut d = vec![0u64; levels.len()];
    let mut below = 0;
    for i in (0..levels.len()).rev() {
        d[i] = given(levels[i]).unwrap_or_else(|| levels[i].default_distance().max(below));
        below = d[i];
    }
    d
}

/// Where a PE lies, as launchers name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// Index of its host in [`Machine::hosts`].
    pub host: u32,
    /// Logical index of its package in the host (0 without packages).
    pub package: u32,
    /// Logical index of its core in the package (in the host without packages).
    pub core: u32,
    /// Logical index of its PU in the core (0 when the PEs are cores).
    pub pu: u32,
    /// Logical index of its (first) PU in the host, counting the PUs that are PEs or
    /// belong to one.
    pub cpu: u32,
    /// The operating system's index of its first PU (hwloc `os_index`), when known.
    pub os_cpu: Option<u32>,
}

/// The parts of a machine, before levels that never branch are dropped.
pub(crate) struct MachineBuilder {
    /// Level kinds top-down.
    pub levels: Vec<LevelKind>,
    /// Distance of each level (same order).
    pub dists: Vec<u64>,
    pub hosts: Vec<String>,
    /// Every PE's index at every level (top-down, `levels.len()` per PE).
    pub digits: Vec<u32>,
    /// Every PE's site.
    pub sites: Vec<Site>,
    pub pe_is_pu: bool,
}

/// A machine: levels, the PEs that exist, and their sites.
#[derive(Clone, Debug)]
pub struct Machine {
    levels: Vec<LevelKind>,
    counts: Vec<u32>,
    dists: Vec<u64>,
    hosts: Vec<String>,
    sites: Vec<Site>,
    /// The position of every PE in the envelope tree, when some are missing.
    positions: Option<Vec<u32>>,
    pe_is_pu: bool,
}

impl MachineBuilder {
    /// The machine: levels where no object has two children dropped (one level kept),
    /// PEs in tree order.
    pub fn build(mut self, what: &str) -> Result<Machine, ArchError> {
        if self.sites.is_empty() {
            return Err(ArchError::invalid(format!("{what} has no PE")));
        }
        let nl = self.levels.len();
        let mut counts = vec![1u32; nl];
        for digits in self.digits.chunks(nl) {
            for (c, &d) in counts.iter_mut().zip(digits) {
                *c = (*c).max(d + 1);
            }
        }
        let mut keep: Vec<usize> = (0..nl).filter(|&i| counts[i] > 1).collect();
        if keep.is_empty() {
            keep.push(nl - 1);
        }
        let levels: Vec<LevelKind> = keep.iter().map(|&i| self.levels[i]).collect();
        let dists: Vec<u64> = keep.iter().map(|&i| self.dists[i]).collect();
        let counts: Vec<u32> = keep.iter().map(|&i| counts[i]).collect();
        let mut total: u64 = 1;
        for &c in &counts {
            total *= u64::from(c);
            if total > u64::from(u32::MAX) {
                return Err(ArchError::invalid(format!(
                    "{what} has more than {} PE positions",
                    u32::MAX
                )));
            }
        }
        let mut keyed: Vec<(u32, Site)> = Vec::with_capacity(self.sites.len());
        for (digits, site) in self.digits.chunks(nl).zip(self.sites.drain(..)) {
            let mut pos: u64 = 0;
            for (&i, &c) in keep.iter().zip(&counts) {
                pos = pos * u64::from(c) + u64::from(digits[i]);
            }
            keyed.push((pos as u32, site));
        }
        keyed.sort_by_key(|(p, _)| *p);
        if let Some(w) = keyed.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(ArchError::invalid(format!(
                "{what}: two PEs at one position ({})",
                w[0].0
            )));
        }
        let positions = (keyed.len() as u64 != total).then(|| keyed.iter().map(|k| k.0).collect());
        Ok(Machine {
            levels,
            counts,
            dists,
            hosts: self.hosts,
            sites: keyed.into_iter().map(|k| k.1).collect(),
            positions,
            pe_is_pu: self.pe_is_pu,
        })
    }
}

impl Machine {
    /// The level kinds, top-down (levels without branching left out).
    pub fn levels(&self) -> &[LevelKind] {
        &self.levels
    }

    /// The most children of an object, per level, top-down.
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// The distance of each level, top-down.
    pub fn distances(&self) -> &[u64] {
        &self.dists
    }

    /// The host names.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// The site of every PE, in PE order.
    pub fn sites(&self) -> &[Site] {
        &self.sites
    }

    /// The position of every PE in the envelope tree ([`Machine::tree_spec`]), when some
    /// positions are empty; `None` when the PEs fill it.
    pub fn positions(&self) -> Option<&[u32]> {
        self.positions.as_deref()
    }

    /// Whether the PEs are PUs (hardware threads) rather than cores.
    pub fn pe_is_pu(&self) -> bool {
        self.pe_is_pu
    }

    /// The number of PEs.
    pub fn pe_count(&self) -> u32 {
        self.sites.len() as u32
    }

    /// The envelope tree as a `tree:` spec (counts bottom-up, then distances).
    pub fn tree_spec(&self) -> String {
        let c: Vec<String> = self.counts.iter().rev().map(|c| c.to_string()).collect();
        let d: Vec<String> = self.dists.iter().rev().map(|d| d.to_string()).collect();
        format!("tree:{}/{}", c.join(":"), d.join(":"))
    }

    /// The target: the envelope tree, or the subset of it that exists.
    pub fn architecture(&self) -> Result<Box<dyn Architecture>, ArchError> {
        let envelope: u64 = self.counts.iter().map(|&c| u64::from(c)).product();
        if self.positions.is_some() && envelope > u64::from(crate::SUBSET_MAX_INNER_PES) {
            return Err(ArchError::invalid(format!(
                "the machine's {} PEs sit in a tree of {envelope} positions ({}): at most {} \
                 when some positions are empty (nodes or packages of different sizes)",
                self.pe_count(),
                self.tree_spec(),
                crate::SUBSET_MAX_INNER_PES
            )));
        }
        let tree = Tree::new(
            self.counts.iter().rev().copied().collect(),
            self.dists.iter().rev().copied().collect(),
        )?;
        Ok(match &self.positions {
            None => Box::new(tree),
            Some(p) => Box::new(Subset::new(
                Box::new(tree),
                p.iter().map(|&x| PeId(x)).collect(),
            )?),
        })
    }

    /// An Open MPI rankfile: `rank R=HOST slot=PACKAGE:CORE` per task (`slot=CPU`, the
    /// logical PU of the host, when the PEs are PUs; launch with `--use-hwthread-cpus`).
    /// `pes[r]` is the PE of rank `r`.
    pub fn rankfile(&self, pes: &[u32]) -> String {
        let mut s = String::with_capacity(pes.len() * 24);
        for (r, &p) in pes.iter().enumerate() {
            let site = &self.sites[p as usize];
            let host = &self.hosts[site.host as usize];
            if self.pe_is_pu {
                let _ = writeln!(s, "rank {r}={host} slot={}", site.cpu);
            } else {
                let _ = writeln!(s, "rank {r}={host} slot={}:{}", site.package, site.core);
            }
        }
        s
    }

    /// A Slurm hostfile: the host of rank `r` on line `r + 1`, for
    /// `srun --distribution=arbitrary`.
    pub fn slurm_hostfile(&self, pes: &[u32]) -> String {
        let mut s = String::with_capacity(pes.len() * 10);
        for &p in pes {
            s.push_str(&self.hosts[self.sites[p as usize].host as usize]);
            s.push('\n');
        }
        s
    }
}

/// The rank reordering of a mapping: `new[t]` is the rank task `t` takes when the ranks
/// are placed in order onto the PEs (rank 0 first on PE 0, as `--map-by core` places
/// them): the tasks sorted by PE, ties by task id, take ranks 0, 1, ... in that order.
/// With one task per PE and as many tasks as PEs, it is the mapping itself.
pub fn rank_reordering(pes: &[u32]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..pes.len() as u32).collect();
    order.sort_by_key(|&t| (pes[t as usize], t));
    let mut new = vec![0u32; pes.len()];
    for (r, &t) in order.iter().enumerate() {
        new[t as usize] = r as u32;
    }
    new
}

/// Most PEs of a machine (the mappers' limit, `taskmap::problem::MAX_MAPPING_PES`).
pub const MAX_MACHINE_PES: usize = 1 << 24;

/// Most names a Slurm node list may expand to.
pub const MAX_NODES: usize = 1 << 20;

/// Expands a Slurm node list: names separated by commas, each with any number of bracket
/// groups of numbers and ranges (`node[01-04,07]`, `a[1-2]b[3-4]`, `rack1-n[1-3],login`).
/// Zero padding is kept (`[08-10]` gives `08 09 10`); a name's groups expand with the last
/// one fastest, as Slurm does.
pub fn expand_node_list(list: &str) -> Result<Vec<String>, ArchError> {
    let bad = |msg: String| ArchError::spec(list, msg);
    let mut out: Vec<String> = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    let bytes = list.as_bytes();
    let mut names: Vec<&str> = Vec::new();
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'[' => {
                if depth > 0 {
                    return Err(bad(format!("nested '[' at byte {}", i + 1)));
                }
                depth += 1;
            }
            b']' => {
                if depth == 0 {
                    return Err(bad(format!("']' without '[' at byte {}", i + 1)));
                }
                depth -= 1;
            }
            b',' if depth == 0 => {
                names.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err(bad("'[' without ']'".into()));
    }
    names.push(&list[start..]);
    for name in names {
        let name = name.trim();
        if name.is_empty() {
            return Err(bad("empty node name".into()));
        }
        // Parts: literal text and bracket groups, each group a list of strings; the
        // number of names is checked before a group is expanded.
        let mut parts: Vec<Vec<String>> = Vec::new();
        let mut rest = name;
        let mut product: usize = 1;
        while let Some(open) = rest.find('[') {
            parts.push(vec![rest[..open].to_string()]);
            let close = open + rest[open..].find(']').expect("brackets are balanced");
            let group = &rest[open + 1..close];
            product = product.saturating_mul(group_size(group, list)?);
            if product.saturating_add(out.len()) > MAX_NODES {
                return Err(bad(format!("more than {MAX_NODES} nodes")));
            }
            parts.push(expand_group(group, list)?);
            rest = &rest[close + 1..];
        }
        parts.push(vec![rest.to_string()]);
        let mut names: Vec<String> = vec![String::new()];
        for part in parts {
            if names.len().saturating_mul(part.len()) + out.len() > MAX_NODES {
                return Err(bad(format!("more than {MAX_NODES} nodes")));
            }
            names = names
                .iter()
                .flat_map(|n| part.iter().map(move |p| format!("{n}{p}")))
                .collect();
        }
        for n in &names {
            if n.chars()
                .any(|c| c.is_whitespace() || c == '=' || c.is_control())
            {
                return Err(bad(format!(
                    "node name \"{n}\" has a space, '=' or a control character"
                )));
            }
        }
        out.extend(names);
    }
    let mut seen: Vec<&String> = out.iter().collect();
    seen.sort();
    if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
        return Err(bad(format!("node {} is listed twice", w[0])));
    }
    Ok(out)
}

/// How many numbers a bracket group holds (at least; its ranges are checked when it is
/// expanded).
fn group_size(group: &str, list: &str) -> Result<usize, ArchError> {
    let mut n: usize = 0;
    for item in group.split(',') {
        let (a, b) = item
            .trim()
            .split_once('-')
            .unwrap_or((item.trim(), item.trim()));
        match (a.parse::<u64>(), b.parse::<u64>()) {
            (Ok(x), Ok(y)) if y >= x => n = n.saturating_add((y - x).saturating_add(1) as usize),
            _ => {
                expand_group(item, list)?;
            }
        }
    }
    Ok(n)
}

/// The numbers of one bracket group: `01-04,07`.
fn expand_group(group: &str, list: &str) -> Result<Vec<String>, ArchError> {
    let bad = |msg: String| ArchError::spec(list, msg);
    let mut out = Vec::new();
    for item in group.split(',') {
        let item = item.trim();
        let (a, b) = item.split_once('-').unwrap_or((item, item));
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
        if !digits(a) || !digits(b) {
            return Err(bad(format!(
                "\"{item}\" in [{group}] is not a number or a range a-b"
            )));
        }
        let x: u64 = a.parse().map_err(|_| bad(format!("{a} is too large")))?;
        let y: u64 = b.parse().map_err(|_| bad(format!("{b} is too large")))?;
        if y < x {
            return Err(bad(format!("descending range {item}")));
        }
        if y - x >= MAX_NODES as u64 || out.len() + (y - x) as usize >= MAX_NODES {
            return Err(bad(format!("more than {MAX_NODES} nodes")));
        }
        let width = if a.len() > 1 && a.starts_with('0') {
            a.len()
        } else {
            0
        };
        out.extend((x..=y).map(|v| format!("{v:0width$}")));
    }
    Ok(out)
}

/// `name:count,...[/d,...]` top-down, for example `nodes:4,package:2,core:8/100,10,1`;
/// `nodes`, when given, names the nodes (the node level is added on top when the list has
/// none, and must have as many nodes when it has one).
pub(crate) fn parse_level_list(spec: &str, nodes: Option<&[String]>) -> Result<Machine, ArchError> {
    let (lv, ds) = match spec.split_once('/') {
        Some((l, d)) => (l, Some(d)),
        None => (spec, None),
    };
    let mut levels: Vec<LevelKind> = Vec::new();
    let mut counts: Vec<u32> = Vec::new();
    for item in lv.split(',') {
        let (name, count) = item.split_once(':').ok_or_else(|| {
            ArchError::spec(spec, format!("expected LEVEL:COUNT, not \"{item}\""))
        })?;
        let kind = LevelKind::parse(name).ok_or_else(|| {
            ArchError::spec(
                spec,
                format!(
                    "unknown level \"{}\" (expected node, package, die, numa, l3, core or pu)",
                    name.trim()
                ),
            )
        })?;
        if levels.contains(&kind) {
            return Err(ArchError::spec(
                spec,
                format!("level {} given twice", kind.name()),
            ));
        }
        if levels.last().is_some_and(|&last| kind < last) {
            return Err(ArchError::spec(
                spec,
                format!(
                    "level {} after {}: levels go top-down (node, package, die, numa, l3, core, pu)",
                    kind.name(),
                    levels.last().map_or("", |k| k.name())
                ),
            ));
        }
        let c: u32 = count.trim().parse().map_err(|_| {
            ArchError::spec(
                spec,
                format!(
                    "count \"{}\" of {} is not a positive integer",
                    count.trim(),
                    kind.name()
                ),
            )
        })?;
        if c == 0 {
            return Err(ArchError::spec(
                spec,
                format!("level {} has count 0", kind.name()),
            ));
        }
        // As many nodes as a node list may name: each is a host with a name.
        if kind == LevelKind::Node && c as usize > MAX_NODES {
            return Err(ArchError::spec(
                spec,
                format!("{c} nodes: at most {MAX_NODES}"),
            ));
        }
        levels.push(kind);
        counts.push(c);
    }
    let mut dists: Vec<u64> = match ds {
        Some(d) => d
            .split(',')
            .map(|t| {
                t.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&x| x > 0)
                    .ok_or_else(|| {
                        ArchError::spec(
                            spec,
                            format!("distance \"{}\" is not a positive integer", t.trim()),
                        )
                    })
            })
            .collect::<Result<_, _>>()?,
        None => default_distances(&levels, |_| None),
    };
    if dists.len() != levels.len() {
        return Err(ArchError::spec(
            spec,
            format!("{} levels but {} distances", levels.len(), dists.len()),
        ));
    }
    if let Some(names) = nodes {
        if levels[0] == LevelKind::Node {
            if counts[0] as usize != names.len() {
                return Err(ArchError::spec(
                    spec,
                    format!(
                        "{} nodes, but the node list names {}",
                        counts[0],
                        names.len()
                    ),
                ));
            }
        } else {
            levels.insert(0, LevelKind::Node);
            counts.insert(0, names.len() as u32);
            dists.insert(0, LevelKind::Node.default_distance().max(dists[0]));
        }
    }
    let total = counts
        .iter()
        .try_fold(1u64, |a, &c| {
            Some(a * u64::from(c)).filter(|&x| x <= u64::from(u32::MAX))
        })
        .ok_or_else(|| ArchError::spec(spec, format!("more than {} PEs", u32::MAX)))?;
    if total > MAX_MACHINE_PES as u64 {
        return Err(ArchError::spec(
            spec,
            format!("{total} PEs: at most {MAX_MACHINE_PES}"),
        ));
    }
    let hosts: Vec<String> = match (nodes, levels[0]) {
        (Some(n), _) => n.to_vec(),
        (None, LevelKind::Node) if counts[0] > 1 => {
            (0..counts[0]).map(|i| format!("node{i}")).collect()
        }
        _ => vec!["localhost".to_string()],
    };
    let at = |k: LevelKind| levels.iter().position(|&x| x == k);
    let (node_at, pkg_at, pu_at) = (
        at(LevelKind::Node),
        at(LevelKind::Package),
        at(LevelKind::Pu),
    );
    let pe_is_pu = pu_at.is_some();
    let mut all_digits = Vec::with_capacity(total as usize * levels.len());
    let mut sites = Vec::with_capacity(total as usize);
    let mut digits = vec![0u32; levels.len()];
    for _ in 0..total {
        // Mixed radix: the core index counts the levels between the package and the PU.
        let mut core = 0u32;
        let mut cpu = 0u32;
        for (i, (&d, &c)) in digits.iter().zip(&counts).enumerate() {
            if Some(i) > node_at {
                cpu = cpu * c + d;
            }
            if Some(i) > pkg_at.or(node_at) && Some(i) != pu_at {
                core = core * c + d;
            }
        }
        let site = Site {
            host: node_at.map_or(0, |i| digits[i]),
            package: pkg_at.map_or(0, |i| digits[i]),
            core,
            pu: pu_at.map_or(0, |i| digits[i]),
            cpu,
            os_cpu: None,
        };
        all_digits.extend_from_slice(&digits);
        sites.push(site);
        for i in (0..digits.len()).rev() {
            digits[i] += 1;
            if digits[i] < counts[i] {
                break;
            }
            digits[i] = 0;
        }
    }
    MachineBuilder {
        levels,
        dists,
        hosts,
        digits: all_digits,
        sites,
        pe_is_pu,
    }
    .build(spec)
    .map_err(|e| e.in_spec(spec))
}
