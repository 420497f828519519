//! The library's SONAME is the runtime's: `libascendcl.so`.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libascendcl.so");
}
