//! Launch files out of a mapping: an Open MPI rankfile, a Slurm hostfile and the rank
//! reordering, written with the mapping, all or none.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use taskmap::report::{LaunchFiles, LaunchReport};
use taskmap::{Architecture, Machine, Mapping, TaskGraph};

/// `--rankfile`, `--slurm-hostfile`, `--permutation`.
#[derive(Args, Default)]
pub(crate) struct LaunchArgs {
    /// Write an Open MPI rankfile of the mapping (task r is rank r): `rank r=HOST
    /// slot=PACKAGE:CORE`, logical indices (`slot=CPU`, the host's logical PU, with
    /// hwloc:FILE,pe=pu). Needs a target with hosts: hwloc:FILE or a level list such as
    /// node:4,package:2,core:8, with --nodes to name the nodes.
    #[arg(long, value_name = "FILE")]
    pub(crate) rankfile: Option<PathBuf>,
    /// Write a Slurm hostfile: the host of rank r on line r+1, for
    /// `SLURM_HOSTFILE=FILE srun --distribution=arbitrary`. Needs a target with hosts.
    #[arg(long, value_name = "FILE")]
    pub(crate) slurm_hostfile: Option<PathBuf>,
    /// Write the rank reordering (TreeMatch's permutation): line t+1 is the rank, in launch
    /// order (ranks placed in order onto the PEs, PE 0 first, each PE taking as many
    /// consecutive ranks as the mapping gives it), that runs task t; with as many tasks as
    /// PEs, the PE of task t.
    #[arg(long, value_name = "FILE")]
    pub(crate) permutation: Option<PathBuf>,
}

impl LaunchArgs {
    /// The launch files with their flags, for the checks on outputs.
    pub(crate) fn outputs(&self) -> [(&'static str, Option<&PathBuf>); 3] {
        [
            ("--rankfile", self.rankfile.as_ref()),
            ("--slurm-hostfile", self.slurm_hostfile.as_ref()),
            ("--permutation", self.permutation.as_ref()),
        ]
    }

    /// Refuses, before a run, launch files the target cannot give.
    pub(crate) fn check(&self, machine: Option<&Machine>) -> Result<()> {
        if machine.is_none() {
            for (flag, p) in &self.outputs()[..2] {
                if p.is_some() {
                    bail!(
                        "{flag} needs a target with hosts: --arch hwloc:FILE (lstopo --of xml) or a \
                         level list such as node:4,package:2,core:8, with --nodes to name the nodes"
                    );
                }
            }
        }
        Ok(())
    }

    /// The files to write for `mapping`: (path, contents).
    pub(crate) fn files(
        &self,
        machine: Option<&Machine>,
        mapping: &Mapping,
    ) -> Vec<(PathBuf, Vec<u8>)> {
        let pes: Vec<u32> = mapping.as_slice().iter().map(|p| p.0).collect();
        let mut out = Vec::new();
        if let (Some(p), Some(m)) = (&self.rankfile, machine) {
            out.push((p.clone(), m.rankfile(&pes).into_bytes()));
        }
        if let (Some(p), Some(m)) = (&self.slurm_hostfile, machine) {
            out.push((p.clone(), m.slurm_hostfile(&pes).into_bytes()));
        }
        if let Some(p) = &self.permutation {
            let mut text = String::with_capacity(pes.len() * 6);
            for r in taskmap_arch::rank_reordering(&pes) {
                text.push_str(&r.to_string());
                text.push('\n');
            }
            out.push((p.clone(), text.into_bytes()));
        }
        out
    }

    /// The launch report, when the target has hosts or a launch file is written.
    pub(crate) fn report(
        &self,
        graph: &TaskGraph,
        arch: &dyn Architecture,
        machine: Option<&Machine>,
        mapping: &Mapping,
        comm_cost: u64,
    ) -> Result<Option<LaunchReport>> {
        if machine.is_none() && self.outputs().iter().all(|(_, p)| p.is_none()) {
            return Ok(None);
        }
        let name = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        let files = LaunchFiles {
            rankfile: name(&self.rankfile),
            slurm_hostfile: name(&self.slurm_hostfile),
            permutation: name(&self.permutation),
        };
        Ok(Some(LaunchReport::new(
            graph, arch, mapping, comm_cost, machine, &files,
        )?))
    }
}
