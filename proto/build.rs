fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=peer.proto");
    tonic_prost_build::configure()
        .build_transport(false)
        .compile_protos(&["peer.proto"], &["."])?;
    Ok(())
}
