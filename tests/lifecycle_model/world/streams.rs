//! Streams, events and asynchronous transfers.

use super::*;

impl World {
    pub(super) fn stream_step(&mut self, what: &str, step: &Step) -> Outcome {
        match step {
            Step::StreamNew { device: id } => {
                let real = Stream::new(&device(*id));
                check(what, &real, Expect::Ok)?;
                if let Ok(real) = real {
                    self.streams.push(StreamObj { real, device: *id });
                }
                Ok(())
            }
            Step::StreamDestroy { stream, how } => {
                let Some(s) = pick(stream, self.streams.len()) else {
                    return Ok(());
                };
                let obj = self.streams.remove(s);
                let result = match how {
                    Disposal::Drop => dropped(obj.real),
                    Disposal::Explicit => obj.real.destroy(),
                };
                check(what, &result, Expect::Ok)
            }
            Step::EventNew { device: id } => {
                let real = Event::new(&device(*id));
                check(what, &real, Expect::Ok)?;
                if let Ok(real) = real {
                    self.events.push(EventObj { real, device: *id });
                }
                Ok(())
            }
            Step::EventDestroy { event, how } => {
                let Some(e) = pick(event, self.events.len()) else {
                    return Ok(());
                };
                let obj = self.events.remove(e);
                let result = match how {
                    Disposal::Drop => dropped(obj.real),
                    Disposal::Explicit => obj.real.destroy(),
                };
                check(what, &result, Expect::Ok)
            }
            Step::Upload { stream, pinned, buf } => self.upload(what, stream, pinned, buf),
            Step::Download { stream, buf, pinned } => self.download(what, stream, buf, pinned),
            Step::Memset { stream, buf, value } => {
                let Some(s) = pick(stream, self.streams.len()) else {
                    return Ok(());
                };
                let stream = &self.streams[s];
                let Some(b) = self.buf_on(stream.device, buf) else {
                    return Ok(());
                };
                let target = &mut self.bufs[b].real;
                let result = stream.real.scope(|scope| scope.fill_bytes(target, *value));
                check(what, &result, Expect::Ok)?;
                self.bufs[b].bytes.fill(*value);
                Ok(())
            }
            Step::StreamCopy { stream, dst, src } => self.stream_copy(what, stream, dst, src),
            Step::Record { stream, event } => {
                let Some(s) = pick(stream, self.streams.len()) else {
                    return Ok(());
                };
                let stream = &self.streams[s];
                let on_device: Vec<usize> = (0..self.events.len())
                    .filter(|&e| self.events[e].device == stream.device)
                    .collect();
                let Some(e) = pick(event, on_device.len()).map(|i| on_device[i]) else {
                    return Ok(());
                };
                let event = &self.events[e].real;
                let result = stream.real.scope(|scope| scope.record(event));
                check(what, &result, Expect::Ok)?;
                check(what, &event.synchronize(), Expect::Ok)?;
                let done = event.query();
                check(what, &done, Expect::Ok)?;
                prop_assert!(done.unwrap_or(false), "{what}: a synchronised event is not complete");
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn upload(&mut self, what: &str, stream: &Index, pinned: &Index, buf: &Index) -> Outcome {
        let Some(s) = pick(stream, self.streams.len()) else {
            return Ok(());
        };
        let Some(p) = pick(pinned, self.pinned.len()) else {
            return Ok(());
        };
        let stream = &self.streams[s];
        let Some(b) = self.buf_on(stream.device, buf) else {
            return Ok(());
        };
        let (source, target) = (&self.pinned[p], &mut self.bufs[b]);
        let n = source.bytes.len().min(target.bytes.len());
        let mut whole = target.real.as_mut_slice();
        let result = whole.slice_mut(..n).and_then(|part| {
            let from = &source.real[..n];
            stream.real.scope(|scope| scope.copy_to_device(from, part))
        });
        check(what, &result, Expect::Ok)?;
        target.bytes[..n].copy_from_slice(&source.bytes[..n]);
        Ok(())
    }

    fn download(&mut self, what: &str, stream: &Index, buf: &Index, pinned: &Index) -> Outcome {
        let Some(s) = pick(stream, self.streams.len()) else {
            return Ok(());
        };
        let Some(p) = pick(pinned, self.pinned.len()) else {
            return Ok(());
        };
        let stream = &self.streams[s];
        let Some(b) = self.buf_on(stream.device, buf) else {
            return Ok(());
        };
        let (source, target) = (&self.bufs[b], &mut self.pinned[p]);
        let n = source.bytes.len().min(target.bytes.len());
        let result = source.real.as_slice().slice(..n).and_then(|from| {
            let to = &mut target.real[..n];
            stream.real.scope(|scope| scope.copy_to_host(from, to))
        });
        check(what, &result, Expect::Ok)?;
        target.bytes[..n].copy_from_slice(&source.bytes[..n]);
        prop_assert_eq!(
            &target.real[..],
            &target.bytes[..],
            "{}: pinned bytes after download",
            what
        );
        Ok(())
    }

    fn stream_copy(&mut self, what: &str, stream: &Index, dst: &Index, src: &Index) -> Outcome {
        let Some(s) = pick(stream, self.streams.len()) else {
            return Ok(());
        };
        let stream = &self.streams[s];
        let (Some(d), Some(from)) = (self.buf_on(stream.device, dst), self.buf_on(stream.device, src)) else {
            return Ok(());
        };
        if d == from {
            return Ok(());
        }
        let (target, source) = if d < from {
            let (low, high) = self.bufs.split_at_mut(from);
            (&mut low[d], &high[0])
        } else {
            let (low, high) = self.bufs.split_at_mut(d);
            (&mut high[0], &low[from])
        };
        let n = target.bytes.len().min(source.bytes.len());
        let mut whole = target.real.as_mut_slice();
        let result = source.real.as_slice().slice(..n).and_then(|from| {
            let part = whole.slice_mut(..n)?;
            stream.real.scope(|scope| scope.copy_on_device(from, part))
        });
        check(what, &result, Expect::Ok)?;
        let copied = source.bytes[..n].to_vec();
        target.bytes[..n].copy_from_slice(&copied);
        Ok(())
    }
}
