//! The file formats of heterogeneous programs and platforms: `.ttig` models and platform
//! files ([`ttig`]), order files ([`order`]), Kasahara's STG graphs ([`stg`]), Pegasus DAX
//! workflows ([`dax`]) and WfCommons traces ([`wfcommons`]). Every reader names the file,
//! line and column of what is wrong.

pub mod dax;
pub mod order;
pub mod stg;
pub mod ttig;
pub mod wfcommons;
