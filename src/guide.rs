//! The user guide: one page per topic, the same text as the repository's
//! `docs/*.md`.
//!
//! | Page | What it covers |
//! |---|---|
//! | [`concepts`] | memory kinds, devices and threads, the failure model, the VMM lifecycle in types, owned forms, `Ordered` and its views, errors and destructors |
//! | [`acl_to_rust`] | every bound AscendCL function and the safe item that calls it |
//! | [`backend_selection`] | real library or software device, the search order, missing symbols and libraries |
//! | [`software_device`] | what the software device emulates, how, and how to configure and inspect it |
//! | [`pools`] | the caching device pool and the pinned host pool, for a torch_npu user |
//! | [`runtime_choices`] | every rule whose error code the closed driver decides, and the code the software device returns |
//! | [`c_and_cpp`] | C and C++ programs on the software device: the drop-in `libascendcl.so` and its CANN-shaped tree |
//! | [`testing`] | testing your own code on the software device (feature `testing`) |
//! | [`stream_races`] | the stream-hazard sanitizer: races between streams, unwritten reads, sync misuse |
//! | [`fabric`] | beyond one machine: MemFabric's global HBM + DRAM pool, the real library, the software fabric, the lifecycle in types (feature `fabric`) |
//! | [`performance`] | benchmark ratios against the machine's physical limits |
//!
//! These modules hold no items: they are documentation only.
// The index below is docs/README.md. Its links are reference-style; the
// definitions here come first, and in Markdown the first definition of a
// label wins, so in rustdoc they lead to the modules of this page while the
// file's own definitions (to the .md files) serve readers of the repository.
//!
//! [concepts]: concepts
//! [acl-to-rust]: acl_to_rust
//! [backend-selection]: backend_selection
//! [software-device]: software_device
//! [runtime-choices]: runtime_choices
//! [pools]: pools
//! [c-and-cpp]: c_and_cpp
//! [testing]: testing
//! [stream-races]: stream_races
//! [fabric]: fabric
//! [performance]: performance
//!
#![doc = include_str!("../docs/README.md")]

pub mod concepts {
    #![doc = include_str!("../docs/concepts.md")]
}

pub mod acl_to_rust {
    #![doc = include_str!("../docs/acl-to-rust.md")]
}

pub mod backend_selection {
    #![doc = include_str!("../docs/backend-selection.md")]
}

pub mod software_device {
    #![doc = include_str!("../docs/software-device.md")]
}

pub mod runtime_choices {
    #![doc = include_str!("../docs/runtime-choices.md")]
}

pub mod pools {
    #![doc = include_str!("../docs/pools.md")]
}

pub mod c_and_cpp {
    #![doc = include_str!("../docs/c-and-cpp.md")]
}

pub mod testing {
    // The guide's examples use `ascend::testing` and run as doctests, so the
    // page needs the cargo feature `testing` (docs.rs builds with it).
    #![cfg_attr(feature = "testing", doc = include_str!("../docs/testing.md"))]
    #![cfg_attr(
        not(feature = "testing"),
        doc = "Testing your own code: this page is built with the cargo feature `testing` (docs.rs \
               builds with it), and in the repository at `docs/testing.md`."
    )]
}

pub mod stream_races {
    #![doc = include_str!("../docs/stream-races.md")]
}

pub mod fabric {
    // The page's example uses `ascend::fabric` and runs as a doctest, so the
    // page needs the cargo feature `fabric`.
    #![cfg_attr(feature = "fabric", doc = include_str!("../docs/fabric.md"))]
    #![cfg_attr(
        not(feature = "fabric"),
        doc = "Beyond one machine (MemFabric): this page is built with the cargo feature `fabric`, and in \
               the repository at `docs/fabric.md`."
    )]
}

pub mod performance {
    #![doc = include_str!("../docs/performance.md")]
}
