//! Gives the C library the SONAME of MemFabric's library.
//!
//! Cargo names the file `libmemfabric_soft_smem.so`; programs link it as
//! `-lmf_smem`, so the installed copy is `libmf_smem.so`, and its SONAME
//! (what the dynamic linker records in a program linked against it, and
//! looks for at run time) must be that name too.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // The ELF SONAME is a GNU linker option; the software fabric itself is
    // Linux-only (memfd, /proc).
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmf_smem.so");
    }
}
