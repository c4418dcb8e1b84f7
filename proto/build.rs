//! Compiles `cubeswarm/v1/cubeswarm.proto` with protox (a pure-Rust protobuf compiler: no
//! `protoc` is needed anywhere) and generates prost messages and tonic services.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = "cubeswarm/v1/cubeswarm.proto";
    println!("cargo:rerun-if-changed={file}");
    let fds = protox::compile([file], ["."])?;
    tonic_prost_build::configure()
        // A table chunk's bytes as `Bytes`: decoded as a view of the received buffer, not
        // copied into a vector of their own (a fetch moves gigabytes through it).
        .bytes(".cubeswarm.v1.Chunk.data")
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
