//! `taskmap arch`: a target architecture's size, distances, links and Scotch form.

use anyhow::{anyhow, bail, Result};
use clap::Args;
use taskmap::PeId;

use crate::input::*;
use crate::output::*;

#[derive(Args)]
pub(crate) struct ArchArgs {
    /// Target architecture spec or Scotch target file.
    pub(crate) spec: String,
    #[command(flatten)]
    pub(crate) nodes: NodeList,
    /// Print the distance between these two PEs.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub(crate) distance: Option<Vec<u32>>,
    /// Print the Scotch target description (for gmap) and nothing else.
    #[arg(long)]
    pub(crate) scotch: bool,
    /// Print the physical links between PEs, one `a b weight` line each (0-based), and
    /// nothing else; fails for targets whose links pass through switches (trees).
    #[arg(long, conflicts_with = "scotch")]
    pub(crate) links: bool,
    /// Report format.
    #[arg(short, long, value_enum, default_value = "human")]
    pub(crate) format: OutputFormat,
}

#[derive(serde::Serialize)]
pub(crate) struct ArchReport {
    pub(crate) spec: String,
    pub(crate) pes: u32,
    pub(crate) total_capacity: u128,
    pub(crate) diameter: u64,
    pub(crate) mean_distance: f64,
    pub(crate) links: u64,
    pub(crate) distance: Option<(u32, u32, u64)>,
}

pub(crate) fn cmd_arch(a: ArchArgs) -> Result<u8> {
    let (arch, _) = load_target(&a.spec, &a.nodes)?;
    if a.scotch {
        let t = taskmap_arch::write_scotch_target(arch.as_ref())
            .ok_or_else(|| anyhow!("{} has no Scotch target description", arch.spec()))?;
        outln!("{}", t.trim_end());
        return Ok(0);
    }
    let k = arch.pe_count();
    if a.links {
        // The link list holds 16 bytes per link. Targets with routes build one of up to
        // 2^29 links (hypercube:24, meshes and tori of 2^22 PEs) and refuse larger ones
        // themselves; complete targets stop at 2^25 links (0.5 GiB).
        if let Some(links) = arch.routing().map(|r| r.physical_link_count() / 2) {
            if links <= 1 << 29 {
                taskmap_graph::memory::ensure(u128::from(links) * 16, || {
                    format!("the link list of {}", arch.spec())
                })?;
            }
        }
        let g = taskmap_arch::explicit_graph_of(arch.as_ref())
            .filter(|g| g.vertex_count == k && g.scale == 1)
            .ok_or_else(|| anyhow!("{} has no link graph between PEs alone", arch.spec()))?;
        // Written a block at a time, without a string per link.
        let mut out = String::with_capacity(1 << 20);
        for (x, y, w) in &g.edges {
            use std::fmt::Write as _;
            let _ = writeln!(out, "{x} {y} {w}");
            if out.len() >= (1 << 20) - 64 {
                out!("{}", out);
                out.clear();
            }
        }
        out!("{}", out);
        return Ok(0);
    }
    let distance = match &a.distance {
        Some(v) => {
            for &p in v {
                if p >= k {
                    bail!("PE {} out of range 0..{}", p, k);
                }
            }
            Some((v[0], v[1], arch.distance(PeId(v[0]), PeId(v[1]))))
        }
        None => None,
    };
    let r = ArchReport {
        spec: arch.spec(),
        pes: k,
        total_capacity: arch.total_capacity(),
        diameter: taskmap_arch::diameter(arch.as_ref()),
        mean_distance: taskmap_arch::mean_distance(arch.as_ref()),
        // The links that exist: a mesh's boundary PEs have ids for links they lack.
        links: arch.routing().map_or(0, |r| r.physical_link_count()),
        distance,
    };
    match a.format {
        OutputFormat::Json | OutputFormat::Csv => print_data(&r, a.format)?,
        OutputFormat::Human => {
            outln!("target          {}", r.spec);
            outln!("PEs             {}", r.pes);
            outln!("total capacity  {}", r.total_capacity);
            outln!("diameter        {}", r.diameter);
            outln!("mean distance   {:.4}", r.mean_distance);
            if r.links > 0 {
                outln!("directed links  {}", r.links);
            }
            if let Some((x, y, d)) = r.distance {
                outln!("distance({}, {}) = {}", x, y, d);
            }
        }
    }
    Ok(0)
}
