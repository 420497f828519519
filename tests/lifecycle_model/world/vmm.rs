//! The VMM steps, the export/import rule, and raw probes of the orders
//! the types forbid.

use super::*;

impl World {
    pub(super) fn vmm(&mut self, what: &str, op: &LifecycleOp) -> Outcome {
        match op {
            LifecycleOp::Reserve { granules } => {
                let real = VirtualRange::reserve(granules * self.granule);
                check(what, &real, Expect::Ok)?;
                if let Ok(real) = real {
                    let id = self.id();
                    self.ranges.push(RangeObj {
                        id,
                        real: Rc::new(real),
                        granules: *granules,
                        device: None,
                        maps: 0,
                    });
                }
                Ok(())
            }
            LifecycleOp::Allocate { prop, granules } => {
                let size = granules * self.granule;
                let real = PhysicalAlloc::new(prop, size);
                check(what, &real, Expect::Ok)?;
                if let Ok(real) = real {
                    let id = self.id();
                    self.memories.push(Memory {
                        size,
                        device: match prop.location() {
                            MemLocation::Device(id) => Some(id),
                            _ => None,
                        },
                        bytes: vec![0; size],
                        known: vec![false; size],
                        refs: 1,
                        mappings: 0,
                        exported: false,
                    });
                    self.physicals.push(PhysObj {
                        id,
                        real: Rc::new(real),
                        memory: self.memories.len() - 1,
                        maps: 0,
                    });
                }
                Ok(())
            }
            LifecycleOp::Map {
                range,
                physical,
                slot,
                access,
            } => self.map(what, range, physical, slot, *access),
            LifecycleOp::SetAccess { mapping, grants } => {
                let Some(m) = pick(mapping, self.mappings.len()) else {
                    return Ok(());
                };
                let result = self.mappings[m].held.set_access(grants);
                check(what, &result, Expect::Ok)?;
                self.mappings[m].accessible = true;
                Ok(())
            }
            LifecycleOp::Write { mapping, at, len, seed } => {
                let Some(m) = pick(mapping, self.mappings.len()) else {
                    return Ok(());
                };
                let obj = &mut self.mappings[m];
                let size = obj.held.size();
                let start = at.index(size);
                let n = (*len).min(size - start);
                let data = pattern(*seed, n);
                let result = obj.held.write(start, &data);
                let expect = if obj.accessible {
                    Expect::Ok
                } else {
                    Expect::Code("aclrtMemcpy", sys::ACL_ERROR_RT_PARAM_INVALID)
                };
                check(what, &result, expect)?;
                if obj.accessible {
                    let memory = &mut self.memories[obj.memory];
                    memory.bytes[start..start + n].copy_from_slice(&data);
                    memory.known[start..start + n].fill(true);
                }
                Ok(())
            }
            LifecycleOp::Read { mapping, at, len } => {
                let Some(m) = pick(mapping, self.mappings.len()) else {
                    return Ok(());
                };
                let obj = &mut self.mappings[m];
                let size = obj.held.size();
                let start = at.index(size);
                let n = (*len).min(size - start);
                if obj.accessible {
                    // Bytes nothing wrote are written (zeros) first: reading
                    // them would be a read of uninitialised memory, which the
                    // sanitizer reports, and their value means nothing.
                    let memory = &mut self.memories[obj.memory];
                    let mut at = start;
                    while at < start + n {
                        let unknown = memory.known[at..start + n].iter().take_while(|known| !**known).count();
                        if unknown == 0 {
                            at += 1;
                            continue;
                        }
                        check(what, &obj.held.write(at, &vec![0; unknown]), Expect::Ok)?;
                        memory.bytes[at..at + unknown].fill(0);
                        memory.known[at..at + unknown].fill(true);
                        at += unknown;
                    }
                }
                let read = obj.held.read(start, n);
                let expect = if obj.accessible {
                    Expect::Ok
                } else {
                    Expect::Code("aclrtMemcpy", sys::ACL_ERROR_RT_PARAM_INVALID)
                };
                check(what, &read, expect)?;
                if let Ok(read) = read {
                    let memory = &self.memories[obj.memory];
                    for (k, byte) in read.iter().enumerate() {
                        let at = start + k;
                        prop_assert!(
                            !memory.known[at] || memory.bytes[at] == *byte,
                            "{what}: byte {at} of the mapping at offset {:#x} is {byte:#x}, the model says {:#x}",
                            obj.offset,
                            memory.bytes[at]
                        );
                    }
                }
                Ok(())
            }
            LifecycleOp::Retain { mapping } => {
                let Some(m) = pick(mapping, self.mappings.len()) else {
                    return Ok(());
                };
                let real = self.mappings[m].held.retain_physical();
                check(what, &real, Expect::Ok)?;
                if let Ok(real) = real {
                    let memory = self.mappings[m].memory;
                    prop_assert_eq!(real.size(), self.memories[memory].size, "{}: retained size", what);
                    self.memories[memory].refs += 1;
                    let id = self.id();
                    self.physicals.push(PhysObj {
                        id,
                        real: Rc::new(real),
                        memory,
                        maps: 0,
                    });
                }
                Ok(())
            }
            LifecycleOp::Export { physical, kind } => self.export(what, physical, *kind),
            LifecycleOp::Unmap { mapping, how } => {
                let Some(m) = pick(mapping, self.mappings.len()) else {
                    return Ok(());
                };
                let obj = self.mappings.remove(m);
                let result = match how {
                    Disposal::Drop => dropped(obj.held),
                    Disposal::Explicit => obj.held.unmap(),
                };
                check(what, &result, Expect::Ok)?;
                self.memories[obj.memory].mappings -= 1;
                if let Some(physical) = self.physicals.iter_mut().find(|p| p.id == obj.physical) {
                    physical.maps -= 1;
                }
                if let Some(range) = self.ranges.iter_mut().find(|r| r.id == obj.range) {
                    range.maps -= 1;
                    if range.maps == 0 {
                        range.device = None;
                    }
                }
                Ok(())
            }
            LifecycleOp::Free { physical, how } => {
                let Some(p) = pick(physical, self.physicals.len()) else {
                    return Ok(());
                };
                if self.physicals[p].maps > 0 {
                    // Borrowed by a mapping: freeing it does not compile.
                    let real = &self.physicals[p].real;
                    prop_assert!(
                        self.mappings.iter().any(|m| m.held.uses_physical(real)),
                        "{what}: the model counts mappings of an allocation no mapping borrows"
                    );
                    return Ok(());
                }
                let obj = self.physicals.remove(p);
                let real = Rc::try_unwrap(obj.real);
                prop_assert!(
                    real.is_ok(),
                    "{what}: a mapping still borrows an allocation the model thinks free"
                );
                let Ok(real) = real else { unreachable!() };
                let result = match how {
                    Disposal::Drop => dropped(real),
                    Disposal::Explicit => real.free(),
                };
                check(what, &result, Expect::Ok)?;
                let memory = &mut self.memories[obj.memory];
                memory.refs -= 1;
                if memory.refs == 0 {
                    // The export ends with the handle's last reference.
                    memory.exported = false;
                }
                Ok(())
            }
            LifecycleOp::Release { range, how } => {
                let Some(r) = pick(range, self.ranges.len()) else {
                    return Ok(());
                };
                if self.ranges[r].maps > 0 {
                    let real = &self.ranges[r].real;
                    prop_assert!(
                        self.mappings.iter().any(|m| m.held.uses_range(real)),
                        "{what}: the model counts mappings in a range no mapping borrows"
                    );
                    return Ok(());
                }
                let obj = self.ranges.remove(r);
                let real = Rc::try_unwrap(obj.real);
                prop_assert!(
                    real.is_ok(),
                    "{what}: a mapping still borrows a range the model thinks free"
                );
                let Ok(real) = real else { unreachable!() };
                let result = match how {
                    Disposal::Drop => dropped(real),
                    Disposal::Explicit => real.release(),
                };
                check(what, &result, Expect::Ok)
            }
        }
    }

    fn map(&mut self, what: &str, range: &Index, physical: &Index, slot: &Index, access: MapAccess) -> Outcome {
        let (Some(r), Some(p)) = (pick(range, self.ranges.len()), pick(physical, self.physicals.len())) else {
            return Ok(());
        };
        let (range_obj, physical_obj) = (&self.ranges[r], &self.physicals[p]);
        let memory = &self.memories[physical_obj.memory];
        let offset = slot.index(range_obj.granules) * self.granule;
        let (api, how) = match access {
            MapAccess::ReadWrite => ("aclrtMapMem", MapHow::ReadWrite),
            MapAccess::NoAccess => ("aclrtMemMapNoAccess", MapHow::NoAccess),
        };
        let end = offset + memory.size;
        let overlaps = self
            .mappings
            .iter()
            .any(|m| m.range == range_obj.id && m.offset < end && offset < m.offset + self.memories[m.memory].size);
        // The safe API maps one physical memory once at a time, through
        // any of its handles.
        let mapped_already = memory.mappings > 0;
        let expect = if end > range_obj.granules * self.granule || overlaps || mapped_already {
            Expect::Invalid
        } else if matches!((range_obj.device, memory.device), (Some(a), Some(b)) if a != b) {
            // One range maps the memory of one device.
            Expect::Code(api, sys::ACL_ERROR_RT_PARAM_INVALID)
        } else {
            Expect::Ok
        };
        let held = HeldMapping::map(&range_obj.real, &physical_obj.real, offset, how);
        check(what, &held, expect)?;
        let Ok(held) = held else { return Ok(()) };
        let (range_id, physical_id, memory_index) = (range_obj.id, physical_obj.id, physical_obj.memory);
        let device = memory.device;
        self.mappings.push(MapObj {
            held,
            range: range_id,
            physical: physical_id,
            memory: memory_index,
            offset,
            accessible: matches!(access, MapAccess::ReadWrite),
        });
        self.memories[memory_index].mappings += 1;
        self.physicals[p].maps += 1;
        let range_obj = &mut self.ranges[r];
        range_obj.maps += 1;
        range_obj.device = range_obj.device.or(device);
        Ok(())
    }

    fn export(&mut self, what: &str, physical: &Index, kind: ShareKind) -> Outcome {
        let Some(p) = pick(physical, self.physicals.len()) else {
            return Ok(());
        };
        let obj = &self.physicals[p];
        let memory = &mut self.memories[obj.memory];
        let api = match kind {
            ShareKind::V1 => "aclrtMemExportToShareableHandle",
            _ => "aclrtMemExportToShareableHandleV2",
        };
        let export = obj.real.export(kind);
        let expect = if memory.exported {
            // One export per handle per process.
            Expect::Code(api, sys::ACL_ERROR_RT_PARAM_INVALID)
        } else {
            Expect::Ok
        };
        check(what, &export, expect)?;
        let Ok(export) = export else { return Ok(()) };
        memory.exported = true;
        let token = export.token();
        drop(export);
        // Importing in the exporting process is refused.
        let import_api = match kind {
            ShareKind::V1 => "aclrtMemImportFromShareableHandle",
            _ => "aclrtMemImportFromShareableHandleV2",
        };
        let imported = ImportedAlloc::import(&token, &device(0));
        check(
            &format!("{what} (import in the same process)"),
            &imported,
            Expect::Code(import_api, sys::ACL_ERROR_RT_PARAM_INVALID),
        )
    }

    pub(super) fn probe(&mut self, what: &str, step: &Step) -> Outcome {
        match step {
            Step::ProbeRelease { range } => {
                let Some(r) = pick(range, self.ranges.len()) else {
                    return Ok(());
                };
                let obj = &self.ranges[r];
                if obj.maps == 0 {
                    // A raw release would really release it.
                    return Ok(());
                }
                // SAFETY: the base of a live reservation that still has
                // mappings: the runtime must refuse and change nothing (if
                // it wrongly released, the case fails here).
                let code = unsafe { sys::aclrtReleaseMemAddress(obj.real.base()) };
                prop_assert_eq!(code, sys::ACL_ERROR_RT_PARAM_INVALID, "{}: release while mapped", what);
                Ok(())
            }
            Step::ProbeMapOver { mapping } => {
                let Some(m) = pick(mapping, self.mappings.len()) else {
                    return Ok(());
                };
                let obj = &self.mappings[m];
                let handle = self
                    .physicals
                    .iter()
                    .find(|p| p.id == obj.physical)
                    .map(|p| p.real.as_raw())
                    .expect("a mapping's allocation is alive");
                // SAFETY: a live mapping's address and size, and a live
                // handle; the address is in use, so the runtime must refuse
                // and change nothing.
                let code = unsafe { sys::aclrtMapMem(obj.held.address(), obj.held.size(), 0, handle, 0) };
                prop_assert_eq!(code, sys::ACL_ERROR_RT_PARAM_INVALID, "{}: map over a mapping", what);
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
