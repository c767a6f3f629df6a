//! One file per subcommand: each turns its arguments into a configuration, makes the
//! library call, and prints the result.

pub(crate) mod algorithms;
pub(crate) mod amap;
pub(crate) mod arch;
pub(crate) mod compare;
pub(crate) mod convert;
pub(crate) mod eval;
pub(crate) mod gen;
pub(crate) mod hetero;
pub(crate) mod info;
pub(crate) mod map;
pub(crate) mod sim;

pub(crate) use algorithms::{cmd_algorithms, AlgorithmsArgs};
pub(crate) use amap::{cmd_amap, cmd_delay, AmapArgs, DelayArgs};
pub(crate) use arch::{cmd_arch, ArchArgs};
pub(crate) use compare::{cmd_compare, CompareArgs};
pub(crate) use convert::{cmd_convert, ConvertArgs};
pub(crate) use eval::{cmd_eval, EvalArgs};
pub(crate) use gen::{cmd_gen, GenArgs};
pub(crate) use hetero::{cmd_hetero, HeteroArgs};
pub(crate) use info::{cmd_info, InfoArgs};
pub(crate) use map::{cmd_map, MapArgs};
pub(crate) use sim::{cmd_sim, SimArgs};
