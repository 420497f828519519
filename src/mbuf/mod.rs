//! Message buffers (mbufs): [`Mbuf`], an owned `aclrtMbuf`.
//!
//! An mbuf is a *header* pointing at a *data area* of fixed capacity, with a
//! data length (how many bytes of the area are meaningful, 0 at allocation),
//! a 96-byte user-data area ([`USER_DATA_SIZE`]) and a link to the next mbuf
//! of a chain.
//!
//! ```text
//! Mbuf::new(&runtime, capacity) = aclrtAllocBuf
//! mbuf.share()                  = aclrtCopyBufRef  (a second header, same data area)
//! head.append(other)            = aclrtAppendBufChain (the head owns `other` from then on)
//! drop(Mbuf)                    = aclrtFreeBuf (the chain it heads with it; the data
//!                                 area goes with its last header)
//! ```
//!
//! # Sharing and `&mut`
//!
//! [`Mbuf::share`] makes a second `Mbuf` on the **same bytes**. Two owned
//! values that could each hand out `&mut [u8]` to the same bytes would be
//! unsound, so [`Mbuf::data_mut`] works only while the data area has one
//! header in this process's safe code, like [`std::sync::Arc::get_mut`]: it
//! returns `None` while a share (or a chain holding one) is alive. Reading
//! ([`Mbuf::data`]) is always allowed: shared bytes are only ever read. The
//! count is kept in Rust (a token shared by the `Mbuf`s of one data area),
//! because the runtime does not report an mbuf's reference count; checking
//! it under `&mut self` cannot race, since making a new share needs a
//! `&Mbuf` of the same data area and the only one is borrowed mutably.
//!
//! # Chains
//!
//! [`Mbuf::append`] takes the appended `Mbuf` by value: the runtime frees a
//! chain's members with its head, so the head owns them, and the safe API
//! cannot build a cycle or free a member twice. Members are read through
//! [`Mbuf::chain_get`], a borrowed read-only [`MbufView`].
//!
//! # Examples
//!
//! ```
//! use ascend::Runtime;
//! use ascend::mbuf::Mbuf;
//! let runtime = Runtime::init()?;
//! let mut head = Mbuf::new(&runtime, 64)?;
//! if let Some(bytes) = head.data_mut() {
//!     bytes[..5].copy_from_slice(b"hello");
//! }
//! head.set_len(5)?;
//! head.set_user_data(0, &7u32.to_le_bytes())?;
//!
//! let shared = head.share()?; // same bytes, second header
//! assert_eq!(&shared.data()[..5], b"hello");
//! assert!(head.data_mut().is_none(), "shared bytes are read-only");
//! drop(shared);
//! assert!(head.data_mut().is_some());
//!
//! head.append(Mbuf::new(&runtime, 16)?)?;
//! assert_eq!(head.chain_len()?, 2);
//! assert_eq!(head.chain_get(1)?.capacity(), 16);
//! # Ok::<(), ascend::Error>(())
//! ```

use crate::error::{Error, Result, check};
use crate::runtime::Runtime;
use ascend_sys as sys;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

/// Size of an mbuf's user-data area, in bytes (the runtime refuses
/// `offset + size` above it).
pub const USER_DATA_SIZE: usize = 96;

/// Where an mbuf's data is, read once from `aclrtGetBufData` (it never
/// moves while a header lives).
#[derive(Debug, Clone, Copy)]
struct Area {
    ptr: NonNull<u8>,
    capacity: usize,
}

/// Reads an mbuf's data area.
fn area(method: &'static str, raw: sys::aclrtMbuf) -> Result<Area> {
    let (mut data, mut capacity) = (std::ptr::null_mut::<c_void>(), 0usize);
    // SAFETY: `raw` is a live mbuf; both out-pointers are valid.
    check("aclrtGetBufData", unsafe {
        sys::aclrtGetBufData(raw, &mut data, &mut capacity)
    })?;
    let ptr = NonNull::new(data.cast::<u8>()).ok_or_else(|| Error::InvalidArgument {
        method,
        api: "aclrtGetBufData",
        reason: "the runtime returned a NULL data area".into(),
    })?;
    Ok(Area { ptr, capacity })
}

/// The data length of `raw`.
fn data_len(raw: sys::aclrtMbuf) -> Result<usize> {
    let mut len = 0usize;
    // SAFETY: `raw` is a live mbuf; valid out-pointer.
    check("aclrtGetBufDataLen", unsafe { sys::aclrtGetBufDataLen(raw, &mut len) })?;
    Ok(len)
}

/// The whole user-data area of `raw`.
fn user_data(raw: sys::aclrtMbuf) -> Result<[u8; USER_DATA_SIZE]> {
    let mut bytes = [0u8; USER_DATA_SIZE];
    // SAFETY: `raw` is a live mbuf; `bytes` is valid for 96 bytes.
    check("aclrtGetBufUserData", unsafe {
        sys::aclrtGetBufUserData(raw, bytes.as_mut_ptr().cast(), USER_DATA_SIZE, 0)
    })?;
    Ok(bytes)
}

/// An owned message buffer (`aclrtAllocBuf`), freed with the chain it heads
/// on drop (`aclrtFreeBuf`, best effort: a failure is logged). See the
/// [module documentation](self) for sharing and chains.
///
/// **Threads:** `Send` and `Sync`: shared access only reads the bytes.
///
/// ```
/// use ascend::Runtime;
/// use ascend::mbuf::Mbuf;
/// let runtime = Runtime::init()?;
/// let mut message = Mbuf::new(&runtime, 64)?;
/// message.data_mut().expect("not shared")[..5].copy_from_slice(b"hello");
/// message.set_len(5)?;
/// let copy = message.share()?; // a second header on the same bytes
/// assert_eq!(&copy.data()[..copy.len()?], b"hello");
/// assert!(message.data_mut().is_none()); // shared: read-only now
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug)]
#[doc(alias = "aclrtFreeBuf")]
pub struct Mbuf {
    raw: NonNull<c_void>,
    area: Area,
    /// One clone per `Mbuf` (or chain) holding a header on this data area.
    token: Arc<()>,
    /// The tokens of the appended members (their data areas stay counted
    /// as shared while this chain lives).
    members: Vec<Arc<()>>,
    /// Keeps AscendCL initialised while the mbuf lives.
    _runtime: Runtime,
}

// SAFETY: the header is a runtime handle any thread may use; the data area
// is plain memory, written only through `&mut self` while no other `Mbuf`
// shares it.
unsafe impl Send for Mbuf {}
// SAFETY: `&Mbuf` only reads the bytes and queries the runtime.
unsafe impl Sync for Mbuf {}

impl Mbuf {
    /// Allocates an mbuf whose data area has `capacity` bytes
    /// (`aclrtAllocBuf`); its data length is 0.
    ///
    /// # Errors
    ///
    /// The runtime's code: `ACL_ERROR_INVALID_PARAM` for a capacity of 0,
    /// a memory-allocation code when the memory is not there,
    /// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` where mbufs are not supported.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{ErrorCode, Runtime};
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let buf = Mbuf::new(&runtime, 128)?;
    /// assert_eq!((buf.capacity(), buf.len()?), (128, 0));
    /// let zero = Mbuf::new(&runtime, 0).unwrap_err();
    /// assert_eq!(zero.code(), Some(ErrorCode::INVALID_PARAM));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtAllocBuf")]
    pub fn new(runtime: &Runtime, capacity: usize) -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check("aclrtAllocBuf", unsafe { sys::aclrtAllocBuf(&mut raw, capacity) })?;
        Self::adopt("Mbuf::new", raw, Arc::new(()), runtime.clone())
    }

    /// Takes ownership of the live header `raw`, freeing it if its data
    /// area cannot be read.
    fn adopt(method: &'static str, raw: sys::aclrtMbuf, token: Arc<()>, runtime: Runtime) -> Result<Self> {
        let Some(raw) = NonNull::new(raw) else {
            return Err(Error::InvalidArgument {
                method,
                api: "aclrtAllocBuf",
                reason: "the runtime returned a NULL mbuf".into(),
            });
        };
        match area(method, raw.as_ptr()) {
            Ok(area) => Ok(Self {
                raw,
                area,
                token,
                members: Vec::new(),
                _runtime: runtime,
            }),
            Err(error) => {
                // SAFETY: the live header just made, freed once.
                let code = unsafe { sys::aclrtFreeBuf(raw.as_ptr()) };
                if let Err(free_error) = check("aclrtFreeBuf", code) {
                    log::warn!("mbuf freed after a failed {method}: {free_error}");
                }
                Err(error)
            }
        }
    }

    /// The raw handle (still owned by this value).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let message = Mbuf::new(&runtime, 16)?;
    /// let raw = message.as_raw(); // for a raw `ascend_sys` call; `message` still owns it
    /// assert!(!raw.is_null());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> sys::aclrtMbuf {
        self.raw.as_ptr()
    }

    /// The data area's capacity in bytes (the size given to [`Mbuf::new`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let message = Mbuf::new(&runtime, 100)?;
    /// assert_eq!(message.capacity(), 100);
    /// assert_eq!(message.data().len(), 100); // the whole area, whatever the data length
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetBufData")]
    pub fn capacity(&self) -> usize {
        self.area.capacity
    }

    /// The whole data area ([`capacity`](Self::capacity) bytes; the first
    /// [`len`](Self::len) are the message).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut message = Mbuf::new(&runtime, 8)?;
    /// message.data_mut().expect("not shared")[..3].copy_from_slice(b"abc");
    /// message.set_len(3)?;
    /// assert_eq!(&message.data()[..message.len()?], b"abc");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetBufData")]
    pub fn data(&self) -> &[u8] {
        // SAFETY: the area is `capacity` bytes of host-visible memory that
        // lives as long as this header; no `&mut` to it exists while `&self`
        // is borrowed (see `data_mut`).
        unsafe { std::slice::from_raw_parts(self.area.ptr.as_ptr(), self.area.capacity) }
    }

    /// The whole data area, writable, or `None` while another `Mbuf` (a
    /// [`share`](Self::share), or a chain it was appended to) shares it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut message = Mbuf::new(&runtime, 8)?;
    /// message.data_mut().expect("the only header")[0] = 7;
    /// let copy = message.share()?;
    /// assert!(message.data_mut().is_none(), "shared: read-only");
    /// drop(copy);
    /// assert_eq!(message.data_mut().map(|bytes| bytes[0]), Some(7), "writable again");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetBufData")]
    pub fn data_mut(&mut self) -> Option<&mut [u8]> {
        if Arc::strong_count(&self.token) != 1 {
            return None;
        }
        // SAFETY: as in `data`; this is the only `Mbuf` of the data area and
        // it is borrowed mutably, so no other reference to the bytes exists.
        Some(unsafe { std::slice::from_raw_parts_mut(self.area.ptr.as_ptr(), self.area.capacity) })
    }

    /// Whether another `Mbuf` shares this data area (then
    /// [`data_mut`](Self::data_mut) is `None`).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let message = Mbuf::new(&runtime, 8)?;
    /// assert!(!message.is_shared());
    /// let copy = message.share()?;
    /// assert!(message.is_shared() && copy.is_shared());
    /// drop(copy);
    /// assert!(!message.is_shared());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_shared(&self) -> bool {
        Arc::strong_count(&self.token) != 1
    }

    /// The data length (`aclrtGetBufDataLen`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut message = Mbuf::new(&runtime, 64)?;
    /// assert_eq!(message.len()?, 0); // a new mbuf holds no data
    /// message.set_len(10)?;
    /// assert_eq!(message.len()?, 10);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetBufDataLen")]
    pub fn len(&self) -> Result<usize> {
        data_len(self.as_raw())
    }

    /// Whether the data length is 0.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut message = Mbuf::new(&runtime, 64)?;
    /// assert!(message.is_empty()?);
    /// message.set_len(1)?;
    /// assert!(!message.is_empty()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Sets the data length (`aclrtSetBufDataLen`); each header has its
    /// own, a share starts with a copy.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `len` is above the capacity (checked
    /// in Rust); the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut message = Mbuf::new(&runtime, 64)?;
    /// message.set_len(64)?;
    /// assert!(message.set_len(65).is_err(), "above the capacity: refused in Rust");
    /// let copy = message.share()?; // a share starts with a copy of the length ...
    /// assert_eq!(copy.len()?, 64);
    /// message.set_len(5)?; // ... and keeps its own
    /// assert_eq!((message.len()?, copy.len()?), (5, 64));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtSetBufDataLen")]
    pub fn set_len(&mut self, len: usize) -> Result<()> {
        if len > self.capacity() {
            return Err(Error::InvalidArgument {
                method: "Mbuf::set_len",
                api: "aclrtSetBufDataLen",
                reason: format!("len {len} is above the capacity {}", self.capacity()),
            });
        }
        // SAFETY: the live header this value owns.
        check("aclrtSetBufDataLen", unsafe {
            sys::aclrtSetBufDataLen(self.as_raw(), len)
        })
    }

    /// The whole 96-byte user-data area (`aclrtGetBufUserData`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut message = Mbuf::new(&runtime, 8)?;
    /// assert_eq!(message.user_data()?, [0; ascend::mbuf::USER_DATA_SIZE]);
    /// message.set_user_data(0, b"tag")?;
    /// assert_eq!(&message.user_data()?[..3], b"tag");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetBufUserData")]
    pub fn user_data(&self) -> Result<[u8; USER_DATA_SIZE]> {
        user_data(self.as_raw())
    }

    /// Writes `bytes` into the user-data area at `offset`
    /// (`aclrtSetBufUserData`). Writing nothing does nothing.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `offset + bytes.len()` is above
    /// [`USER_DATA_SIZE`] (checked in Rust); the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::{Mbuf, USER_DATA_SIZE};
    /// let mut buf = Mbuf::new(&Runtime::init()?, 8)?;
    /// buf.set_user_data(90, &[1, 2, 3])?;
    /// assert_eq!(buf.user_data()?[90..93], [1, 2, 3]);
    /// assert!(buf.set_user_data(USER_DATA_SIZE, &[1]).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtSetBufUserData")]
    pub fn set_user_data(&mut self, offset: usize, bytes: &[u8]) -> Result<()> {
        if offset.checked_add(bytes.len()).is_none_or(|end| end > USER_DATA_SIZE) {
            return Err(Error::InvalidArgument {
                method: "Mbuf::set_user_data",
                api: "aclrtSetBufUserData",
                reason: format!(
                    "offset {offset} + {} bytes is beyond the {USER_DATA_SIZE}-byte user-data area",
                    bytes.len()
                ),
            });
        }
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: the live header this value owns; `bytes` is valid for its length.
        check("aclrtSetBufUserData", unsafe {
            sys::aclrtSetBufUserData(self.as_raw(), bytes.as_ptr().cast(), bytes.len(), offset)
        })
    }

    /// A second `Mbuf` on the same data area (`aclrtCopyBufRef`), with a
    /// copy of this one's data length and user data and no chain. While
    /// both live, neither gives [`data_mut`](Self::data_mut).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut message = Mbuf::new(&runtime, 32)?;
    /// message.data_mut().expect("not shared")[..2].copy_from_slice(b"hi");
    /// message.set_len(2)?;
    /// let copy = message.share()?; // the same bytes, a second header
    /// assert_eq!(copy.data().as_ptr(), message.data().as_ptr());
    /// assert_eq!(&copy.data()[..copy.len()?], b"hi");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCopyBufRef")]
    pub fn share(&self) -> Result<Mbuf> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: the live header this value owns; valid out-pointer.
        check("aclrtCopyBufRef", unsafe {
            sys::aclrtCopyBufRef(self.as_raw(), &mut raw)
        })?;
        Self::adopt("Mbuf::share", raw, Arc::clone(&self.token), self._runtime.clone())
    }

    /// Appends `other` (with the chain it heads) at the end of this chain
    /// (`aclrtAppendBufChain`). This mbuf owns it from then on: it is freed
    /// with this one. On failure `other` is dropped (freed).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut head = Mbuf::new(&runtime, 16)?;
    /// head.append(Mbuf::new(&runtime, 32)?)?; // freed with `head` from now on
    /// head.append(Mbuf::new(&runtime, 64)?)?;
    /// assert_eq!(head.chain_len()?, 3);
    /// assert_eq!(head.chain_get(2)?.capacity(), 64);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtAppendBufChain")]
    pub fn append(&mut self, other: Mbuf) -> Result<()> {
        // SAFETY: both live headers are owned by values held here; `other`
        // heads its own chain, disjoint from this one (owned values cannot
        // be chain members).
        check("aclrtAppendBufChain", unsafe {
            sys::aclrtAppendBufChain(self.as_raw(), other.as_raw())
        })?;
        // The header is now freed with this chain's head: take its parts
        // without freeing it, and keep its data areas counted as shared.
        let parts = other.into_parts();
        self.members.push(parts.token);
        self.members.extend(parts.members);
        Ok(())
    }

    /// Splits into the fields without freeing the header.
    fn into_parts(self) -> Parts {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped; each owned field is read out once.
        unsafe {
            Parts {
                token: std::ptr::read(&this.token),
                members: std::ptr::read(&this.members),
                _runtime: std::ptr::read(&this._runtime),
            }
        }
    }

    /// The number of mbufs in this chain, this one included
    /// (`aclrtGetBufChainNum`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut head = Mbuf::new(&runtime, 16)?;
    /// assert_eq!(head.chain_len()?, 1); // the mbuf itself
    /// head.append(Mbuf::new(&runtime, 16)?)?;
    /// assert_eq!(head.chain_len()?, 2);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetBufChainNum")]
    pub fn chain_len(&self) -> Result<usize> {
        let mut num = 0u32;
        // SAFETY: the live header this value owns; valid out-pointer.
        check("aclrtGetBufChainNum", unsafe {
            sys::aclrtGetBufChainNum(self.as_raw(), &mut num)
        })?;
        Ok(num as usize)
    }

    /// Member `index` of this chain, read-only (`aclrtGetBufFromChain`;
    /// 0 is this mbuf).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `index` does not fit the runtime's
    /// 32-bit index; the runtime's code (an index past the end among them).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut head = Mbuf::new(&runtime, 16)?;
    /// let mut tail = Mbuf::new(&runtime, 8)?;
    /// tail.set_user_data(0, &[42])?;
    /// head.append(tail)?;
    /// assert_eq!(head.chain_get(0)?.as_raw(), head.as_raw()); // 0 is the head
    /// assert_eq!(head.chain_get(1)?.user_data()?[0], 42);
    /// assert!(head.chain_get(2).is_err(), "past the end");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetBufFromChain")]
    pub fn chain_get(&self, index: usize) -> Result<MbufView<'_>> {
        let index32 = u32::try_from(index).map_err(|_| Error::InvalidArgument {
            method: "Mbuf::chain_get",
            api: "aclrtGetBufFromChain",
            reason: format!("index {index} does not fit in 32 bits"),
        })?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the live header this value owns; valid out-pointer.
        check("aclrtGetBufFromChain", unsafe {
            sys::aclrtGetBufFromChain(self.as_raw(), index32, &mut raw)
        })?;
        let raw = NonNull::new(raw).ok_or_else(|| Error::InvalidArgument {
            method: "Mbuf::chain_get",
            api: "aclrtGetBufFromChain",
            reason: "the runtime returned a NULL mbuf".into(),
        })?;
        let area = area("Mbuf::chain_get", raw.as_ptr())?;
        Ok(MbufView {
            raw,
            area,
            _chain: std::marker::PhantomData,
        })
    }
}

/// What [`Mbuf::into_parts`] gives back.
struct Parts {
    token: Arc<()>,
    members: Vec<Arc<()>>,
    _runtime: Runtime,
}

impl Drop for Mbuf {
    fn drop(&mut self) {
        // SAFETY: the live header this value owns (with the chain it
        // heads), freed once.
        let code = unsafe { sys::aclrtFreeBuf(self.as_raw()) };
        if let Err(error) = check("aclrtFreeBuf", code) {
            log::warn!("mbuf drop: {error}");
        }
    }
}

/// A read-only view of one member of a chain, borrowed from the chain's
/// head ([`Mbuf::chain_get`]).
///
/// ```
/// use ascend::Runtime;
/// use ascend::mbuf::Mbuf;
/// let runtime = Runtime::init()?;
/// let mut head = Mbuf::new(&runtime, 16)?;
/// let mut tail = Mbuf::new(&runtime, 32)?;
/// tail.set_len(3)?;
/// head.append(tail)?; // the head owns the chain now
/// assert_eq!(head.chain_len()?, 2);
/// let member = head.chain_get(1)?;
/// assert_eq!((member.capacity(), member.len()?), (32, 3));
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct MbufView<'a> {
    raw: NonNull<c_void>,
    area: Area,
    _chain: std::marker::PhantomData<&'a Mbuf>,
}

impl MbufView<'_> {
    /// The raw handle (owned by the chain's head).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut head = Mbuf::new(&runtime, 16)?;
    /// let mut tail = Mbuf::new(&runtime, 32)?;
    /// head.append(tail)?;
    /// let member = head.chain_get(1)?;
    /// assert!(!member.as_raw().is_null());
    /// assert_ne!(member.as_raw(), head.as_raw());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> sys::aclrtMbuf {
        self.raw.as_ptr()
    }

    /// The data area's capacity in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut head = Mbuf::new(&runtime, 16)?;
    /// let mut tail = Mbuf::new(&runtime, 32)?;
    /// head.append(tail)?;
    /// assert_eq!(head.chain_get(1)?.capacity(), 32);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetBufData")]
    pub fn capacity(&self) -> usize {
        self.area.capacity
    }

    /// The whole data area.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut head = Mbuf::new(&runtime, 16)?;
    /// let mut tail = Mbuf::new(&runtime, 32)?;
    /// tail.data_mut().expect("not shared")[..4].copy_from_slice(b"tail");
    /// head.append(tail)?;
    /// assert_eq!(&head.chain_get(1)?.data()[..4], b"tail");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetBufData")]
    pub fn data(&self) -> &[u8] {
        // SAFETY: the member lives as long as the head borrowed for `'_`;
        // members' bytes are never handed out mutably (the head's own bytes
        // are not while it is borrowed).
        unsafe { std::slice::from_raw_parts(self.area.ptr.as_ptr(), self.area.capacity) }
    }

    /// The data length (`aclrtGetBufDataLen`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut head = Mbuf::new(&runtime, 16)?;
    /// let mut tail = Mbuf::new(&runtime, 32)?;
    /// tail.set_len(7)?;
    /// head.append(tail)?;
    /// assert_eq!(head.chain_get(1)?.len()?, 7);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetBufDataLen")]
    pub fn len(&self) -> Result<usize> {
        data_len(self.as_raw())
    }

    /// Whether the data length is 0.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut head = Mbuf::new(&runtime, 16)?;
    /// let mut tail = Mbuf::new(&runtime, 32)?;
    /// head.append(tail)?;
    /// assert!(head.chain_get(1)?.is_empty()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The whole user-data area (`aclrtGetBufUserData`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// use ascend::mbuf::Mbuf;
    /// let runtime = Runtime::init()?;
    /// let mut head = Mbuf::new(&runtime, 16)?;
    /// let mut tail = Mbuf::new(&runtime, 32)?;
    /// tail.set_user_data(95, &[9])?;
    /// head.append(tail)?;
    /// assert_eq!(head.chain_get(1)?.user_data()?[95], 9);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetBufUserData")]
    pub fn user_data(&self) -> Result<[u8; USER_DATA_SIZE]> {
        user_data(self.as_raw())
    }
}
