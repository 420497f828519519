//! Every bound signature and struct size, checked against the real C
//! headers of the installed MemFabric (ABI 1.3) by the C++ compiler.
//!
//! The test writes a C++ file that includes the package's headers
//! (`$MEMFABRIC_HOME/include/smem/host/`, from the wheel; nothing of them is
//! copied into this project) and re-declares each function of
//! [`for_each_smem_function!`] as this crate declares it, translated to C;
//! a C++ compiler refuses an `extern "C"` function re-declared with another
//! parameter list or return type. It also asserts each struct's size and
//! alignment as Rust computes them. Without the headers (no
//! `MEMFABRIC_HOME`) the test is skipped with the reason, unless
//! `MEMFABRIC_REQUIRE_REAL=1`.

use memfabric_sys::*;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

/// One bound function as C text: `RET NAME(PARAMS)`.
struct Declaration {
    name: &'static str,
    ret: &'static str,
    params: Vec<(&'static str, &'static str)>,
}

macro_rules! declarations {
    ($(
        $(#[$meta:meta])*
        fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty;
    )*) => {
        vec![$(Declaration {
            name: stringify!($name),
            ret: stringify!($ret),
            params: vec![$((stringify!($arg), stringify!($ty))),*],
        }),*]
    };
}

/// The C spelling of a Rust type of the list.
fn c_type(rust: &str) -> String {
    // `stringify!` may write `* mut T`.
    let rust = rust.trim().replace("* const", "*const").replace("* mut", "*mut");
    let rust = rust.as_str();
    if let Some(inner) = rust.strip_prefix("*const") {
        // `*const T` is `const T *`; for a pointer T, `T const *`.
        let inner = c_type(inner);
        return if inner.ends_with('*') {
            format!("{inner} const *")
        } else {
            format!("const {inner} *")
        };
    }
    if let Some(inner) = rust.strip_prefix("*mut") {
        return format!("{} *", c_type(inner));
    }
    match rust {
        "()" => "void",
        "i32" => "int32_t",
        "u16" => "uint16_t",
        "u32" => "uint32_t",
        "u64" => "uint64_t",
        "usize" => "size_t",
        "bool" => "bool",
        "f32" => "float",
        "c_int" => "int",
        "c_char" => "char",
        "c_void" => "void",
        // C names of the crate's types (and its two callback aliases, which
        // the C++ file declares).
        other => other,
    }
    .to_string()
}

/// The folder of the installed headers, or why there is none.
fn header_dir() -> Result<PathBuf, String> {
    let home = std::env::var_os("MEMFABRIC_HOME").ok_or("MEMFABRIC_HOME is not set")?;
    let dir = PathBuf::from(home).join("include/smem/host");
    if dir.join("smem_bm.h").is_file() {
        Ok(dir)
    } else {
        Err(format!("{} has no smem_bm.h", dir.display()))
    }
}

fn size_check(out: &mut String, name: &str, size: usize, align: usize) {
    let _ = writeln!(out, "static_assert(sizeof({name}) == {size}, \"size of {name}\");");
    let _ = writeln!(
        out,
        "static_assert(alignof({name}) == {align}, \"alignment of {name}\");"
    );
}

#[test]
fn every_signature_and_size_matches_the_installed_headers() {
    let dir = match header_dir() {
        Ok(dir) => dir,
        Err(why) if std::env::var("MEMFABRIC_REQUIRE_REAL").as_deref() != Ok("1") => {
            println!("skipped: no MemFabric headers ({why}); set MEMFABRIC_HOME=<unzipped wheel>/memfabric_hybrid");
            return;
        }
        Err(why) => panic!("MEMFABRIC_REQUIRE_REAL=1 but no MemFabric headers: {why}"),
    };
    let declarations: Vec<Declaration> = memfabric_sys::for_each_smem_function!(declarations);
    assert_eq!(declarations.len(), FUNCTION_NAMES.len());

    let mut source = String::from(
        "#include <stdint.h>\n#include <stddef.h>\n#include \"smem.h\"\n#include \"smem_bm.h\"\n\
         #include \"smem_trans.h\"\n\
         typedef void (*smem_logger_fn)(int, const char *);\n\
         typedef void (*smem_alarm_fn)(uint16_t, const char *);\n\
         typedef void (*smem_alarm_resume_fn)(uint16_t);\n\
         extern \"C\" {\n",
    );
    for declaration in &declarations {
        let params: Vec<String> = declaration
            .params
            .iter()
            .map(|(name, ty)| format!("{} {name}", c_type(ty)))
            .collect();
        let params = if params.is_empty() {
            "void".to_string()
        } else {
            params.join(", ")
        };
        let _ = writeln!(source, "{} {}({params});", c_type(declaration.ret), declaration.name);
    }
    source.push_str("}\n");
    use std::mem::{align_of, size_of};
    size_check(
        &mut source,
        "smem_tls_config",
        size_of::<smem_tls_config>(),
        align_of::<smem_tls_config>(),
    );
    size_check(
        &mut source,
        "smem_bm_config_t",
        size_of::<smem_bm_config_t>(),
        align_of::<smem_bm_config_t>(),
    );
    size_check(
        &mut source,
        "smem_bm_create_option_t",
        size_of::<smem_bm_create_option_t>(),
        align_of::<smem_bm_create_option_t>(),
    );
    size_check(
        &mut source,
        "smem_copy_params_t",
        size_of::<smem_copy_params_t>(),
        align_of::<smem_copy_params_t>(),
    );
    size_check(
        &mut source,
        "smem_batch_copy_params_t",
        size_of::<smem_batch_copy_params_t>(),
        align_of::<smem_batch_copy_params_t>(),
    );
    size_check(
        &mut source,
        "smem_batch_copy_result_t",
        size_of::<smem_batch_copy_result_t>(),
        align_of::<smem_batch_copy_result_t>(),
    );
    size_check(
        &mut source,
        "smem_trans_config_t",
        size_of::<smem_trans_config_t>(),
        align_of::<smem_trans_config_t>(),
    );
    size_check(
        &mut source,
        "smem_trans_quant_copy_param_t",
        size_of::<smem_trans_quant_copy_param_t>(),
        align_of::<smem_trans_quant_copy_param_t>(),
    );
    for (name, value) in [
        ("SMEM_NOT_INIT", SMEM_NOT_INIT),
        ("SMEM_INVALID_PARAM", SMEM_INVALID_PARAM),
        ("SMEM_BUFFER_TOO_SMALL", SMEM_BUFFER_TOO_SMALL),
        ("SMEM_PARTIAL_FAILED", SMEM_PARTIAL_FAILED),
        ("SMEMB_COPY_AUTO", SMEMB_COPY_AUTO as i32),
        ("SMEMB_DATA_OP_HOST_SHM", SMEMB_DATA_OP_HOST_SHM as i32),
        ("SMEM_MEM_TYPE_HOST", SMEM_MEM_TYPE_HOST as i32),
        ("SMEM_TRANS_BOTH", SMEM_TRANS_BOTH as i32),
    ] {
        let _ = writeln!(source, "static_assert((long long)({name}) == {value}LL, \"{name}\");");
    }

    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("header_check_{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a work folder");
    let file = work.join("declarations.cpp");
    std::fs::write(&file, &source).expect("write the C++ file");
    let compiler = std::env::var("CXX")
        .ok()
        .filter(|cxx| !cxx.trim().is_empty())
        .unwrap_or_else(|| "c++".into());
    let output = Command::new(&compiler)
        .args(["-std=c++17", "-fsyntax-only", "-I"])
        .arg(&dir)
        .arg(&file)
        .output()
        .unwrap_or_else(|error| panic!("the C++ compiler `{compiler}` did not run: {error}"));
    assert!(
        output.status.success(),
        "the declarations do not match the headers in {}:\n{}\n--- generated:\n{source}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    println!(
        "{} functions and 8 struct sizes match {}",
        declarations.len(),
        dir.display()
    );
    let _ = std::fs::remove_dir_all(&work);
}
