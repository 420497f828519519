//! Device buffers, peer access, pinned host buffers and host
//! registrations.

use super::*;

impl World {
    pub(super) fn memory_step(&mut self, what: &str, step: &Step) -> Outcome {
        match step {
            Step::BufAlloc { device: id, len, seed } => {
                let dev = device(*id);
                let (real, bytes) = match seed {
                    Some(seed) => {
                        let bytes = pattern(*seed, *len);
                        (DeviceBuf::from_slice(&dev, &bytes), bytes)
                    }
                    None => (DeviceBuf::zeroed(&dev, *len), vec![0; *len]),
                };
                check(what, &real, Expect::Ok)?;
                if let Ok(real) = real {
                    self.bufs.push(BufObj {
                        real,
                        device: *id,
                        bytes,
                    });
                }
                Ok(())
            }
            Step::BufWrite { buf, at, len, seed } => {
                let Some(b) = pick(buf, self.bufs.len()) else {
                    return Ok(());
                };
                let obj = &mut self.bufs[b];
                let start = at.index(obj.bytes.len());
                let n = (*len).min(obj.bytes.len() - start);
                let data = pattern(*seed, n);
                let result = obj
                    .real
                    .as_mut_slice()
                    .slice_mut(start..start + n)
                    .and_then(|mut view| view.write_from_host(&data));
                check(what, &result, Expect::Ok)?;
                obj.bytes[start..start + n].copy_from_slice(&data);
                Ok(())
            }
            Step::BufRead { buf } => {
                let Some(b) = pick(buf, self.bufs.len()) else {
                    return Ok(());
                };
                let obj = &self.bufs[b];
                let read = obj.real.to_vec();
                check(what, &read, Expect::Ok)?;
                prop_assert!(
                    read.ok().as_ref() == Some(&obj.bytes),
                    "{what}: device buffer bytes differ"
                );
                Ok(())
            }
            Step::BufCopy { dst, src } => self.buf_copy(what, dst, src),
            Step::BufFree { buf, how } => {
                let Some(b) = pick(buf, self.bufs.len()) else {
                    return Ok(());
                };
                let obj = self.bufs.remove(b);
                let result = match how {
                    FreeHow::Drop => dropped(obj.real),
                    FreeHow::Free => obj.real.free(),
                    FreeHow::FreeWithDeviceSync => obj.real.free_with_device_sync(),
                };
                check(what, &result, Expect::Ok)
            }
            Step::PeerEnable { from, to } => {
                let result = device(*from).enable_peer_access(&device(*to));
                let expect = if from == to { Expect::Invalid } else { Expect::Ok };
                check(what, &result, expect)?;
                if from != to {
                    self.peers.insert((*from, *to));
                }
                Ok(())
            }
            Step::PeerDisable { from, to } => {
                let result = device(*from).disable_peer_access(&device(*to));
                let expect = if from == to {
                    Expect::Code("aclrtDeviceDisablePeerAccess", sys::ACL_ERROR_INVALID_PARAM)
                } else if self.peers.remove(&(*from, *to)) {
                    Expect::Ok
                } else {
                    Expect::Code("aclrtDeviceDisablePeerAccess", sys::ACL_ERROR_RT_PARAM_INVALID)
                };
                check(what, &result, expect)
            }
            Step::PinnedAlloc { device: id, len, seed } => {
                let bytes = pattern(*seed, *len);
                let real = PinnedHostBuf::from_slice(&device(*id), &bytes);
                check(what, &real, Expect::Ok)?;
                if let Ok(real) = real {
                    self.pinned.push(PinnedObj {
                        real,
                        device: *id,
                        bytes,
                    });
                }
                Ok(())
            }
            Step::PinnedWrite { pinned, seed } => {
                let Some(p) = pick(pinned, self.pinned.len()) else {
                    return Ok(());
                };
                let obj = &mut self.pinned[p];
                obj.bytes = pattern(*seed, obj.bytes.len());
                obj.real.copy_from_slice(&obj.bytes);
                Ok(())
            }
            Step::PinnedFree { pinned, how } => {
                let Some(p) = pick(pinned, self.pinned.len()) else {
                    return Ok(());
                };
                let obj = self.pinned.remove(p);
                prop_assert_eq!(&obj.real[..], &obj.bytes[..], "{}: pinned bytes before free", what);
                let result = match how {
                    FreeHow::Drop => dropped(obj.real),
                    FreeHow::Free => obj.real.free(),
                    FreeHow::FreeWithDeviceSync => obj.real.free_with_device_sync(&device(obj.device)),
                };
                check(what, &result, Expect::Ok)
            }
            Step::Register {
                device: id,
                pages,
                how,
                seed,
            } => {
                let bytes = pattern(*seed, pages * 4096);
                let buffer = AlignedHostBuf::from_slice(&bytes).expect("host memory");
                let held = HeldRegistration::register(&device(*id), buffer, *how);
                check(what, &held, Expect::Ok)?;
                if let Ok(held) = held {
                    prop_assert_eq!(held.as_slice(), &bytes[..], "{}: registered bytes", what);
                    self.registrations.push(RegObj { held, bytes });
                }
                Ok(())
            }
            Step::RegisterUse {
                registration,
                buf,
                seed,
            } => {
                let Some(r) = pick(registration, self.registrations.len()) else {
                    return Ok(());
                };
                let obj = &mut self.registrations[r];
                obj.bytes = pattern(*seed, obj.bytes.len());
                obj.held.as_mut_slice().copy_from_slice(&obj.bytes);
                let Some(b) = pick(buf, self.bufs.len()) else {
                    return Ok(());
                };
                let target = &mut self.bufs[b];
                let n = target.bytes.len().min(obj.bytes.len());
                let result = target
                    .real
                    .as_mut_slice()
                    .slice_mut(..n)
                    .and_then(|mut view| view.write_from_host(&obj.held.as_slice()[..n]));
                check(what, &result, Expect::Ok)?;
                target.bytes[..n].copy_from_slice(&obj.bytes[..n]);
                Ok(())
            }
            Step::Unregister { registration, how } => {
                let Some(r) = pick(registration, self.registrations.len()) else {
                    return Ok(());
                };
                let obj = self.registrations.remove(r);
                let (result, buffer) = obj.held.into_buffer(*how == Disposal::Explicit);
                check(what, &result, Expect::Ok)?;
                prop_assert_eq!(&buffer[..], &obj.bytes[..], "{}: host bytes after unregistering", what);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn buf_copy(&mut self, what: &str, dst: &Index, src: &Index) -> Outcome {
        let (Some(d), Some(s)) = (pick(dst, self.bufs.len()), pick(src, self.bufs.len())) else {
            return Ok(());
        };
        if d == s {
            return Ok(());
        }
        let (target, source) = if d < s {
            let (low, high) = self.bufs.split_at_mut(s);
            (&mut low[d], &high[0])
        } else {
            let (low, high) = self.bufs.split_at_mut(d);
            (&mut high[0], &low[s])
        };
        let n = target.bytes.len().min(source.bytes.len());
        let result = source.real.as_slice().slice(..n).and_then(|from| {
            let mut whole = target.real.as_mut_slice();
            whole.slice_mut(..n)?.copy_from_device(&from)
        });
        // The destination's device drives the copy and needs access to the
        // source's.
        let allowed = target.device == source.device || self.peers.contains(&(target.device, source.device));
        let expect = if allowed {
            Expect::Ok
        } else {
            Expect::Code("aclrtMemcpy", sys::ACL_ERROR_RT_PARAM_INVALID)
        };
        check(what, &result, expect)?;
        if allowed {
            let copied = source.bytes[..n].to_vec();
            target.bytes[..n].copy_from_slice(&copied);
        }
        Ok(())
    }
}
