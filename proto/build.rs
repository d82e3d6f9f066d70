//! Generates the `Peer` service and the KMS v2 plugin API with the `protoc` that `PROTOC`
//! names: by default the vendored one (.cargo/config.toml), else the one from
//! protoc-bin-vendored itself.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=peer.proto");
    println!("cargo:rerun-if-changed=kms");
    println!("cargo:rerun-if-env-changed=PROTOC");
    let mut config = tonic_prost_build::Config::new();
    if std::env::var_os("PROTOC").is_none() {
        config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    }
    tonic_prost_build::configure()
        .build_transport(false)
        .compile_with_config(
            config,
            &["peer.proto", "kms/v2/api.proto", "kms/v2/envelope.proto"],
            &["."],
        )?;
    Ok(())
}
