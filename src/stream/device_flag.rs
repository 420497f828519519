//! [`DeviceFlag`]: a 64-bit word of device memory that streams and the host
//! synchronise through, and the [`ValueCondition`] a wait compares it with.

use crate::Device;
use crate::error::{Result, check};
use crate::memory::DeviceBuf;
use ascend_sys as sys;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

/// How [`Stream::wait_value`](super::Stream::wait_value) compares the
/// flag's word `w` with the value `v` it was given: the wait ends once the
/// condition holds (the `ACL_STREAM_WAIT_VALUE_*` flags of `aclrtValueWait`).
///
/// ```
/// use ascend::Device;
/// use ascend::stream::{DeviceFlag, Stream, ValueCondition};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let counter = DeviceFlag::new(&device, 0)?;
/// let condition = ValueCondition::GreaterOrEqual;
/// stream.wait_value(&counter, 2, condition)?;
/// counter.set(5)?; // 5 >= 2: the wait ends
/// stream.synchronize()?;
/// assert!(condition.holds(counter.get()?, 2));
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueCondition {
    /// `(w - v) as i64 >= 0`: a counter has reached `v`, also across a
    /// wrap-around (`ACL_STREAM_WAIT_VALUE_GEQ`).
    GreaterOrEqual,
    /// `w == v` (`ACL_STREAM_WAIT_VALUE_EQ`).
    Equal,
    /// `w & v != 0`: one of the bits of `v` is set (`ACL_STREAM_WAIT_VALUE_AND`).
    And,
    /// `!(w | v) != 0`: some bit is clear in both (`ACL_STREAM_WAIT_VALUE_NOR`).
    Nor,
}

impl ValueCondition {
    /// The C flag.
    ///
    /// ```
    /// use ascend::stream::ValueCondition;
    /// assert_eq!(ValueCondition::Equal.raw(), ascend_sys::ACL_STREAM_WAIT_VALUE_EQ);
    /// assert_ne!(ValueCondition::And.raw(), ValueCondition::Nor.raw());
    /// ```
    pub fn raw(self) -> u32 {
        match self {
            ValueCondition::GreaterOrEqual => sys::ACL_STREAM_WAIT_VALUE_GEQ,
            ValueCondition::Equal => sys::ACL_STREAM_WAIT_VALUE_EQ,
            ValueCondition::And => sys::ACL_STREAM_WAIT_VALUE_AND,
            ValueCondition::Nor => sys::ACL_STREAM_WAIT_VALUE_NOR,
        }
    }

    /// Whether a wait for `value` ends when the word is `word`.
    ///
    /// ```
    /// use ascend::stream::ValueCondition;
    /// assert!(ValueCondition::GreaterOrEqual.holds(1, u64::MAX)); // wrapped
    /// assert!(ValueCondition::And.holds(0b110, 0b100));
    /// assert!(!ValueCondition::Nor.holds(u64::MAX, 0));
    /// ```
    pub fn holds(self, word: u64, value: u64) -> bool {
        match self {
            ValueCondition::GreaterOrEqual => word.wrapping_sub(value) as i64 >= 0,
            ValueCondition::Equal => word == value,
            ValueCondition::And => word & value != 0,
            ValueCondition::Nor => !(word | value) != 0,
        }
    }
}

/// A 64-bit word of device memory for memory-semantic synchronisation
/// (`aclrtValueWrite` / `aclrtValueWait`): streams write it and wait for it
/// ([`Stream::write_value`](super::Stream::write_value),
/// [`Stream::wait_value`](super::Stream::wait_value)), and the host reads
/// and writes it ([`DeviceFlag::get`], [`DeviceFlag::set`]).
///
/// Unlike a [`DeviceBuf`], a flag is meant to be written and read at the
/// same time by several streams and the host, so it is shared through an
/// `Arc` and every operation takes `&self`: the word is device memory,
/// never a Rust reference, and each access moves all 8 bytes at once.
///
/// A stream keeps every flag its queued work uses alive until that work is
/// proven finished, so dropping the last handle of the program never frees
/// memory a queued wait or write still uses.
///
/// ```
/// use ascend::Device;
/// use ascend::stream::{DeviceFlag, Stream, ValueCondition};
/// let device = Device::new(0)?;
/// let (consumer, producer) = (Stream::new(&device)?, Stream::new(&device)?);
/// let ready = DeviceFlag::new(&device, 0)?;
/// consumer.wait_value(&ready, 1, ValueCondition::Equal)?; // blocks only `consumer`
/// producer.write_value(&ready, 1)?;
/// consumer.synchronize()?;
/// assert_eq!(ready.get()?, 1);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `DeviceFlag` is `Send` and `Sync`.
pub struct DeviceFlag {
    word: DeviceBuf<u64>,
}

impl DeviceFlag {
    /// A new flag on `device` holding `initial` (`aclrtMalloc` and a
    /// synchronous copy).
    ///
    /// # Errors
    ///
    /// The runtime's code (e.g. out of device memory).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, stream::DeviceFlag};
    /// let device = Device::new(0)?;
    /// let flag = DeviceFlag::new(&device, 42)?;
    /// assert_eq!(flag.get()?, 42);
    /// let for_another_thread = Arc::clone(&flag); // shared, not copied
    /// for_another_thread.set(43)?;
    /// assert_eq!(flag.get()?, 43);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(device: &Device, initial: u64) -> Result<Arc<Self>> {
        Ok(Arc::new(Self {
            word: DeviceBuf::from_slice(device, &[initial])?,
        }))
    }

    /// The device whose memory holds the word.
    ///
    /// ```
    /// use ascend::{Device, stream::DeviceFlag};
    /// let flag = DeviceFlag::new(&Device::new(1)?, 0)?;
    /// assert_eq!(flag.device().id(), 1);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        self.word.device()
    }

    /// The word's device address, for `ascend-sys` calls.
    ///
    /// ```
    /// use ascend::{Device, stream::DeviceFlag};
    /// let device = Device::new(0)?;
    /// let flag = DeviceFlag::new(&device, 0)?;
    /// let value = 7u64;
    /// // SAFETY: the address holds the flag's 8 bytes while `flag` lives;
    /// // `value` is 8 bytes of host memory.
    /// let code = unsafe {
    ///     let src = (&raw const value).cast();
    ///     ascend_sys::aclrtMemcpy(flag.as_raw(), 8, src, 8, ascend_sys::ACL_MEMCPY_HOST_TO_DEVICE)
    /// };
    /// ascend::check("aclrtMemcpy", code)?;
    /// assert_eq!(flag.get()?, 7);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> *mut c_void {
        self.word.as_raw()
    }

    /// The word now (`aclrtMemcpy`; does not wait for streams).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{DeviceFlag, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let flag = DeviceFlag::new(&device, 0)?;
    /// stream.write_value(&flag, 9)?;
    /// stream.synchronize()?; // `get` does not wait for the stream
    /// assert_eq!(flag.get()?, 9);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy")]
    pub fn get(&self) -> Result<u64> {
        let mut word = [0u64];
        self.word.read_to_host(&mut word)?;
        Ok(word[0])
    }

    /// Writes the word from the host (`aclrtMemcpy`; does not wait for
    /// streams): a stream waiting for a condition this value meets goes on.
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::stream::{DeviceFlag, Stream, ValueCondition};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let go = DeviceFlag::new(&device, 0)?;
    /// stream.wait_value(&go, 3, ValueCondition::GreaterOrEqual)?;
    /// go.set(3)?;
    /// stream.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's code.
    #[doc(alias = "aclrtMemcpy")]
    pub fn set(&self, value: u64) -> Result<()> {
        self.device().make_current()?;
        // SAFETY: `value` is 8 live bytes of host memory; the destination is
        // this flag's live 8-byte device allocation. Device memory is not a
        // Rust reference, so writing it through `&self` aliases nothing.
        check("aclrtMemcpy", unsafe {
            sys::aclrtMemcpy(
                self.as_raw(),
                8,
                (&raw const value).cast(),
                8,
                sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        })
    }
}

impl fmt::Debug for DeviceFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceFlag")
            .field("address", &self.as_raw())
            .field("device", &self.device().id())
            .finish()
    }
}
