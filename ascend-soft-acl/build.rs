//! Gives the C library the SONAME of the AscendCL runtime library.
//!
//! Cargo names the file `libascend_soft_acl.so`; programs link it as
//! `-lascendcl`, so the installed copy is `lib64/libascendcl.so`, and its
//! SONAME (what the dynamic linker records in a program linked against it,
//! and looks for at run time) must be that name too.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // The ELF SONAME is a GNU linker option; the software device itself is
    // Linux-only (memfd, /proc).
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libascendcl.so");
    }
}
