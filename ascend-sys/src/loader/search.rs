//! The library search order.

use std::path::{Path, PathBuf};

/// The file name of the AscendCL runtime library.
pub(crate) const LIBRARY_NAME: &str = "libascendcl.so";

/// Environment variable naming the library file explicitly.
pub(crate) const ENV_LIBRARY: &str = "ASCEND_ACL_LIB";

/// One place to try, and where that place came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) path: PathBuf,
    pub(crate) source: &'static str,
}

/// The places to look for the library, in order:
///
/// 1. `ASCEND_ACL_LIB`, when set: that file and nothing else (a user who
///    names a file means that file; silently loading another would hide a
///    mistake);
/// 2. `$ASCEND_HOME_PATH/lib64`, 3. `$ASCEND_TOOLKIT_HOME/lib64` (exported by
///    CANN's `set_env.sh`);
/// 4. `/usr/local/Ascend/cann/lib64` (CANN 9 default),
///    5. `/usr/local/Ascend/ascend-toolkit/latest/lib64` (CANN 8 default);
/// 6. the dynamic linker's own search for `libascendcl.so`
///    (`LD_LIBRARY_PATH`, the cache, the default directories);
/// 7. the `fallbacks` (directories registered with
///    [`add_library_fallback`](crate::add_library_fallback)).
pub(crate) fn candidates(env: impl Fn(&str) -> Option<String>, fallbacks: &[PathBuf]) -> Vec<Candidate> {
    if let Some(file) = env(ENV_LIBRARY).filter(|value| !value.is_empty()) {
        return vec![Candidate {
            path: PathBuf::from(file),
            source: ENV_LIBRARY,
        }];
    }
    let mut list = Vec::new();
    for variable in ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"] {
        if let Some(root) = env(variable).filter(|value| !value.is_empty()) {
            push_unique(&mut list, Path::new(&root).join("lib64").join(LIBRARY_NAME), variable);
        }
    }
    for root in ["/usr/local/Ascend/cann", "/usr/local/Ascend/ascend-toolkit/latest"] {
        push_unique(
            &mut list,
            Path::new(root).join("lib64").join(LIBRARY_NAME),
            "default install location",
        );
    }
    push_unique(&mut list, PathBuf::from(LIBRARY_NAME), "dynamic linker search");
    for dir in fallbacks {
        push_unique(&mut list, dir.join(LIBRARY_NAME), "registered fallback");
    }
    list
}

fn push_unique(list: &mut Vec<Candidate>, path: PathBuf, source: &'static str) {
    if !list.iter().any(|candidate| candidate.path == path) {
        list.push(Candidate { path, source });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn explicit_file_is_the_only_candidate() {
        let list = candidates(
            env_of(&[("ASCEND_ACL_LIB", "/x/lib.so"), ("ASCEND_HOME_PATH", "/h")]),
            &[PathBuf::from("/f")],
        );
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].path, PathBuf::from("/x/lib.so"));
        assert_eq!(list[0].source, "ASCEND_ACL_LIB");
    }

    #[test]
    fn order_follows_the_documented_search() {
        let list = candidates(
            env_of(&[("ASCEND_HOME_PATH", "/h"), ("ASCEND_TOOLKIT_HOME", "/t")]),
            &[PathBuf::from("/f")],
        );
        let paths: Vec<_> = list.iter().map(|c| c.path.to_string_lossy().into_owned()).collect();
        assert_eq!(
            paths,
            [
                "/h/lib64/libascendcl.so",
                "/t/lib64/libascendcl.so",
                "/usr/local/Ascend/cann/lib64/libascendcl.so",
                "/usr/local/Ascend/ascend-toolkit/latest/lib64/libascendcl.so",
                "libascendcl.so",
                "/f/libascendcl.so",
            ]
        );
    }

    #[test]
    fn same_root_twice_is_tried_once_and_empty_values_are_ignored() {
        let list = candidates(
            env_of(&[
                ("ASCEND_HOME_PATH", "/same"),
                ("ASCEND_TOOLKIT_HOME", "/same"),
                ("ASCEND_ACL_LIB", ""),
            ]),
            &[],
        );
        assert_eq!(list.len(), 4);
        assert_eq!(list[0].source, "ASCEND_HOME_PATH");
    }
}
