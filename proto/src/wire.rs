//! The generated `cubeswarm.v1` messages, clients and servers (from
//! `cubeswarm/v1/cubeswarm.proto`; see [`crate::convert`] for the domain types).
#![allow(missing_docs)]
#![allow(clippy::all)]

tonic::include_proto!("cubeswarm.v1");
