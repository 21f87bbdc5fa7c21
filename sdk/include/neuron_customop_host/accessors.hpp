/*
 * The accessors of at::Tensor. The standard accessor holds each (sub-)tensor's address
 * and translation context in a Q7PtrType, the 16-byte layout of the device's library, and
 * reads and writes every element through the pointer neuron_translate returns for it.
 * Streams and TCM copies go through neuron_translate.hpp's span walk, one translate per
 * window stretch. Every misuse the runtime can name is reported by it. C++14.
 */
#ifndef NEURON_CUSTOMOP_HOST_ACCESSORS_HPP
#define NEURON_CUSTOMOP_HOST_ACCESSORS_HPP

#include <stddef.h>

#include <neuron_customop_host/tensor.hpp>

#ifndef NEURON_TRANSLATE_NAMESPACE
#define NEURON_TRANSLATE_NAMESPACE nt_customop_span
#endif
#include <neuron_translate.hpp>

#if defined(__XTENSA__)
/// The device runtime's stand-in for the DMA that moves a TCM copy's data (sdk/device).
extern "C" void nt_device_dma(void *to, const void *from, size_t bytes);
#endif

namespace nt_customop {

/// A tensor element's place as the device's library holds it: the SoC address and a
/// 32-bit handle of the translation context (on a 64-bit host a pointer does not fit).
struct Q7PtrType {
    uint64_t hbm_addr;
    uint32_t ctx;
    uint32_t is_nullptr;
};
static_assert(sizeof(Q7PtrType) == 16, "Q7PtrType is 16 bytes, as on the device");
static_assert(sizeof(c10::Q7PtrType) == 16 && offsetof(c10::Q7PtrType, ctx_ptr) == 8 &&
                  offsetof(c10::Q7PtrType, is_nullptr) == 12,
              "c10::Q7PtrType as the device's: 16 bytes, the context at 8, the flag at 12");
static_assert(offsetof(Q7PtrType, hbm_addr) == 0 && offsetof(Q7PtrType, ctx) == 8 &&
                  offsetof(Q7PtrType, is_nullptr) == 12,
              "Q7PtrType's fields at 0, 8 and 12");
/// The handle of this core's translation context.
constexpr uint32_t kCoreCtx = 1;

enum {
    kStandard = NT_CUSTOMOP_ACCESSOR_STANDARD,
    kReadStream = NT_CUSTOMOP_ACCESSOR_READ_STREAM,
    kWriteStream = NT_CUSTOMOP_ACCESSOR_WRITE_STREAM,
    kTcm = NT_CUSTOMOP_ACCESSOR_TCM
};

template <class T> constexpr int code() { return static_cast<int>(c10::CppTypeToScalarType<T>::value); }

/// What an element access's own steps are: inlined at every optimisation level (the
/// device's -Os would call each, and each call deepens the register windows a translate
/// returns through).
#if defined(__GNUC__)
#define NT_CUSTOMOP_INLINE inline __attribute__((always_inline))
#else
#define NT_CUSTOMOP_INLINE inline
#endif

/// The element a Q7PtrType names, through neuron_translate.
template <class T> NT_CUSTOMOP_INLINE T *element(const Q7PtrType &p)
{
    return static_cast<T *>(neuron_translate(nt_customop_ctx(p.ctx), p.hbm_addr));
}

/// The span walk's view of a tensor's elements.
template <class T> inline NEURON_TRANSLATE_NAMESPACE::Tensor<T> view(const nt_customop_meta *m)
{
    return NEURON_TRANSLATE_NAMESPACE::Tensor<T>(nt_customop_ctx(kCoreCtx), m->hbm_addr, m->numel);
}

/// A stretch's bytes: on the emulated Q7 through the device runtime's DMA stand-in, counted
/// in bytes, not as core instructions (docs/q7-isa.md, "DMA").
inline void dma(void *to, const void *from, size_t bytes)
{
#if defined(__XTENSA__)
    nt_device_dma(to, from, bytes);
#else
    __builtin_memcpy(to, from, bytes);
#endif
}

/// `bytes` between HBM `addr` and local memory at `local` (`write`: to HBM), a window
/// stretch at a time (`neuron_memcpy`, after the runtime checked it).
inline void hbm_move(uint64_t addr, uint64_t bytes, void *local, bool write)
{
    unsigned char *l = static_cast<unsigned char *>(local);
    NEURON_TRANSLATE_NAMESPACE::Tensor<unsigned char> v(nt_customop_ctx(kCoreCtx), addr, bytes);
    v.for_each_span(0, bytes, [&](unsigned long long i, size_t n, unsigned char *p) {
        if (write)
            dma(p, l + i, n);
        else
            dma(l + i, p, n);
    });
}

/// What a TCM accessor or a stream keeps between its copies: the cores running (on one,
/// a copy in range needs no call into the runtime: the checks are inline), the bytes it
/// moved (counted once, when it goes), and the window view whose page tables the runtime
/// filled last. Every copy goes through the span walk: one translate per window stretch.
class Copier {
  public:
    explicit Copier(const nt_customop_meta *m) : m_(m), cores_(nt_customop_cpu_count()) {}
    Copier(const Copier &o) : Copier(o.m_) {}
    Copier &operator=(const Copier &) = delete;
    ~Copier()
    {
        if (in_ || out_)
            nt_customop_count_tcm(in_, out_);
    }

    /// Checks a TCM copy of `count` T from element `first`: inline on one core when it is
    /// right; otherwise the runtime checks it, records it (several cores) or stops the core.
    /// `site`: the kernel's call's return address.
    template <class T> void check(uint64_t first, uint64_t count, bool write, const void *site)
    {
        note(first, count, write);
        if (cores_ > 1 || code<T>() != m_->dtype || first > m_->numel || count > m_->numel - first)
            nt_customop_tcm_copy(m_, code<T>(), first, count, write, site);
        else
            (write ? out_ : in_) += count * sizeof(T);
    }
    /// Counts a stream's copy.
    void count(uint64_t bytes, bool write) { (write ? out_ : in_) += bytes; }
    /// Tells the runtime of a copy of a tensor whose written elements it tracks.
    void note(uint64_t first, uint64_t count, bool write) const
    {
        if (m_->track)
            nt_customop_note(m_, first, count, write);
    }

    /// Elements [first, first + count) to local memory at `to`.
    template <class T> bool copy_out(uint64_t first, uint64_t count, T *to)
    {
        return view<const T>(m_).for_each_span(first, count, [&](unsigned long long i, size_t n, const T *p) {
            hint(i, p, sizeof(T), 0);
            move(to + (i - first), p, n * sizeof(T));
        });
    }
    /// Local memory at `from` to elements [first, first + count).
    template <class T> bool copy_in(uint64_t first, uint64_t count, const T *from)
    {
        return view<T>(m_).for_each_span(first, count, [&](unsigned long long i, size_t n, T *p) {
            hint(i, p, sizeof(T), 1);
            move(p, from + (i - first), n * sizeof(T));
        });
    }

  private:
    static void move(void *to, const void *from, size_t bytes) { dma(to, from, bytes); }
    /// Before the stretch at local p (element i): the runtime fills the rest of the tensor
    /// in that window view, unless the view it filled last shows p already.
    void hint(uint64_t i, const void *p, size_t size, int write)
    {
        uint64_t local = reinterpret_cast<uintptr_t>(p), soc = m_->hbm_addr + i * size;
        if (local >= filled_.lo && local < filled_.hi && filled_.soc + (local - filled_.lo) == soc)
            return;
        nt_customop_prefault(m_, i, reinterpret_cast<const uint8_t *>(p), write, &filled_);
    }
    const nt_customop_meta *m_;
    uint32_t cores_;
    uint64_t in_ = 0, out_ = 0;
    nt_customop_filled filled_ = {0, 0, 0};
};

} // namespace nt_customop

namespace at {

/// An element of a 1-dimensional accessor, as the device's library gives it: not a `T&`
/// but a proxy holding the element's place (a copy of the accessor's Q7PtrType and the
/// element's index) that translates when it is read (`operator T()`) or written
/// (`operator=(T)`), so that no translation window is held from one access to the next.
/// It has nothing else, as on the device: `out[i]++`, `out[i] += v`, `std::max(in[i], 0.f)`,
/// `float &r = out[i]`, `&out[i]`, `out[i] = out[j]` and `printf("%f", in[i])` do not
/// compile; `float v = in[i]; out[i] = v + 1;`, `std::max<float>(in[i], 0.f)` and
/// `(float)in[i]` do (docs/customop-api.md, "Device parity"). Each read and each write
/// is told to the runtime while it tracks the tensor's written elements.
template <class T, bool ReadOnly> class TensorElementReference {
  public:
    TensorElementReference(const nt_customop::Q7PtrType &data, size_t index, const nt_customop_meta *m)
        : data_(data), index_(index), m_(m)
    {
    }
    NT_CUSTOMOP_INLINE operator T() const
    {
        note(0);
        return *place();
    }
    NT_CUSTOMOP_INLINE TensorElementReference &operator=(T v)
    {
        static_assert(!ReadOnly, "an element of a read-only accessor (of a const tensor) cannot be written");
        note(1);
        *place() = v;
        return *this;
    }

  private:
    NT_CUSTOMOP_INLINE T *place() const
    {
        nt_customop::Q7PtrType p = data_;
        p.hbm_addr += static_cast<uint64_t>(index_) * sizeof(T);
        return nt_customop::element<T>(p);
    }
    NT_CUSTOMOP_INLINE void note(int write) const
    {
        if (m_->track)
            nt_customop_note(m_, (data_.hbm_addr - m_->hbm_addr) / sizeof(T) + index_, 1, write);
    }
    nt_customop::Q7PtrType data_;
    // const, as the device's: the proxy has no copy assignment (`out[i] = out[j]` does not
    // compile there either).
    const size_t index_;
    const nt_customop_meta *m_;
};

/// a[i] of an N-dimensional accessor: an (N-1)-dimensional one, or an element.
template <class T, size_t N, bool ReadOnly> class TensorAccessor {
  public:
    using Sub = TensorAccessor<T, N - 1, ReadOnly>;
    TensorAccessor(const nt_customop_meta *m, uint64_t addr, int dim, bool owner)
        : m_(m), addr_(addr), dim_(dim), owner_(owner)
    {
        if (owner_)
            nt_customop_open(m_, nt_customop::kStandard, nt_customop::code<T>(), static_cast<int>(N));
    }
    TensorAccessor(const TensorAccessor &o) : TensorAccessor(o.m_, o.addr_, o.dim_, o.owner_) {}
    TensorAccessor &operator=(const TensorAccessor &) = delete;
    ~TensorAccessor()
    {
        if (owner_)
            nt_customop_close(m_, nt_customop::kStandard, nullptr);
    }

    NT_CUSTOMOP_INLINE Sub operator[](int64_t i) const
    {
        int64_t n = m_->sizes[dim_];
        if (i < 0 || i >= n)
            nt_customop_bad_index(m_, dim_, i, n);
        uint64_t step = static_cast<uint64_t>(m_->strides[dim_]) * sizeof(T);
        return Sub(m_, addr_ + static_cast<uint64_t>(i) * step, dim_ + 1, false);
    }
    /// Size of this accessor's dimension d.
    int64_t size(int64_t d) const { return m_->sizes[dim_ + d]; }
    int64_t stride(int64_t d) const { return m_->strides[dim_ + d]; }

  protected:
    const nt_customop_meta *m_;
    uint64_t addr_;
    int dim_;
    bool owner_;
};

template <class T, bool ReadOnly> class TensorAccessor<T, 1, ReadOnly> {
  public:
    TensorAccessor(const nt_customop_meta *m, uint64_t addr, int dim, bool owner)
        : m_(m), addr_(addr), dim_(dim), owner_(owner)
    {
        if (owner_)
            nt_customop_open(m_, nt_customop::kStandard, nt_customop::code<T>(), 1);
    }
    TensorAccessor(const TensorAccessor &o) : TensorAccessor(o.m_, o.addr_, o.dim_, o.owner_) {}
    TensorAccessor &operator=(const TensorAccessor &) = delete;
    ~TensorAccessor()
    {
        if (owner_)
            nt_customop_close(m_, nt_customop::kStandard, nullptr);
    }

    NT_CUSTOMOP_INLINE TensorElementReference<T, ReadOnly> operator[](int64_t i) const
    {
        int64_t n = m_->sizes[dim_];
        if (i < 0 || i >= n)
            nt_customop_bad_index(m_, dim_, i, n);
        nt_customop::Q7PtrType p = {addr_, nt_customop::kCoreCtx, 0};
        return TensorElementReference<T, ReadOnly>(p, static_cast<size_t>(i * m_->strides[dim_]), m_);
    }
    int64_t size(int64_t d) const { return m_->sizes[dim_ + d]; }
    int64_t stride(int64_t d) const { return m_->strides[dim_ + d]; }

  private:
    const nt_customop_meta *m_;
    uint64_t addr_;
    int dim_;
    bool owner_;
};

/// Reads a tensor's elements in order from element 0, through a 4 KiB TCM buffer.
template <class T> class TensorReadStreamAccessor {
  public:
    explicit TensorReadStreamAccessor(const nt_customop_meta *m)
        : m_(m), buf_(reinterpret_cast<T *>(nt_customop_open(m, nt_customop::kReadStream, nt_customop::code<T>(), 0))),
          copier_(m)
    {
    }
    TensorReadStreamAccessor(TensorReadStreamAccessor &&o) noexcept
        : m_(o.m_), buf_(o.buf_), copier_(o.m_), next_(o.next_), at_(o.at_), have_(o.have_), closed_(o.closed_)
    {
        o.closed_ = true;
    }
    TensorReadStreamAccessor(const TensorReadStreamAccessor &) = delete;
    ~TensorReadStreamAccessor() { close(); }

    T read()
    {
        if (closed_ || next_ >= m_->numel)
            nt_customop_bad_stream(m_, closed_, false, next_);
        if (!buf_) {
            nt_customop::Q7PtrType p = {m_->hbm_addr + next_++ * sizeof(T), nt_customop::kCoreCtx, 0};
            return *nt_customop::element<T>(p);
        }
        if (at_ == have_) {
            uint64_t left = m_->numel - next_, cap = NT_CUSTOMOP_STREAM_BUFFER_BYTES / sizeof(T);
            have_ = left < cap ? left : cap;
            copier_.note(next_, have_, false);
            copier_.copy_out(next_, have_, buf_);
            copier_.count(have_ * sizeof(T), false);
            at_ = 0;
        }
        ++next_;
        return buf_[at_++];
    }
    int close()
    {
        if (!closed_)
            nt_customop_close(m_, nt_customop::kReadStream, reinterpret_cast<uint8_t *>(buf_));
        closed_ = true;
        return 0;
    }

  private:
    const nt_customop_meta *m_;
    T *buf_;
    nt_customop::Copier copier_;
    uint64_t next_ = 0, at_ = 0, have_ = 0;
    bool closed_ = false;
};

/// Writes a tensor's elements in order from element 0; they reach the tensor when the
/// 4 KiB TCM buffer fills, at close() and when the accessor goes out of scope.
template <class T> class TensorWriteStreamAccessor {
  public:
    explicit TensorWriteStreamAccessor(const nt_customop_meta *m)
        : m_(m), buf_(reinterpret_cast<T *>(nt_customop_open(m, nt_customop::kWriteStream, nt_customop::code<T>(), 0))),
          copier_(m)
    {
    }
    TensorWriteStreamAccessor(TensorWriteStreamAccessor &&o) noexcept
        : m_(o.m_), buf_(o.buf_), copier_(o.m_), next_(o.next_), at_(o.at_), closed_(o.closed_)
    {
        o.closed_ = true;
    }
    TensorWriteStreamAccessor(const TensorWriteStreamAccessor &) = delete;
    ~TensorWriteStreamAccessor() { close(); }

    void write(T v)
    {
        if (closed_ || next_ + at_ >= m_->numel)
            nt_customop_bad_stream(m_, closed_, true, next_ + at_);
        if (!buf_) {
            nt_customop::Q7PtrType p = {m_->hbm_addr + next_++ * sizeof(T), nt_customop::kCoreCtx, 0};
            *nt_customop::element<T>(p) = v;
            return;
        }
        buf_[at_++] = v;
        if (at_ == NT_CUSTOMOP_STREAM_BUFFER_BYTES / sizeof(T))
            flush();
    }
    int close()
    {
        if (closed_)
            return 0;
        flush();
        nt_customop_close(m_, nt_customop::kWriteStream, reinterpret_cast<uint8_t *>(buf_));
        closed_ = true;
        return 0;
    }

  private:
    void flush()
    {
        if (!buf_ || at_ == 0)
            return;
        copier_.note(next_, at_, true);
        copier_.copy_in(next_, at_, buf_);
        copier_.count(at_ * sizeof(T), true);
        next_ += at_;
        at_ = 0;
    }
    const nt_customop_meta *m_;
    T *buf_;
    nt_customop::Copier copier_;
    uint64_t next_ = 0, at_ = 0;
    bool closed_ = false;
};

#if defined(__GNUC__)
/// A function whose return address is its caller's place (a report names the kernel's line).
#define NT_CUSTOMOP_PLACED __attribute__((noinline))
#define NT_CUSTOMOP_CALLER __builtin_return_address(0)
#else
#define NT_CUSTOMOP_PLACED
#define NT_CUSTOMOP_CALLER nullptr
#endif

/// Copies between a tensor (offsets as if it were flat) and local (TCM) memory.
template <bool ReadOnly> class TensorTcmAccessor {
  public:
    explicit TensorTcmAccessor(const nt_customop_meta *m) : m_(m), copier_(m)
    {
        nt_customop_open(m_, nt_customop::kTcm, m_->dtype, 0);
    }
    /// (The runtime is told where the local buffer is: static or global data is not dataram,
    /// where the device's copy must land.)
    template <class T> NT_CUSTOMOP_PLACED void tensor_to_tcm(T *tcm, size_t offset, size_t count) const
    {
        nt_customop_tcm_local(tcm, count * sizeof(T), NT_CUSTOMOP_CALLER);
        copier_.check<T>(offset, count, false, NT_CUSTOMOP_CALLER);
        copier_.copy_out(offset, count, tcm);
    }
    /// (The runtime is told of the TCM bytes it reads: under --sanitize, a watched block's
    /// bytes nothing wrote are reported at the caller's line.)
    template <class T> NT_CUSTOMOP_PLACED void tcm_to_tensor(const T *tcm, size_t offset, size_t count) const
    {
        static_assert(!ReadOnly, "tcm_to_tensor through the TCM accessor of a const tensor");
        nt_customop_tcm_local(tcm, count * sizeof(T), NT_CUSTOMOP_CALLER);
        copier_.check<T>(offset, count, true, NT_CUSTOMOP_CALLER);
        nt_customop_tcm_read_at(tcm, count * sizeof(T), NT_CUSTOMOP_CALLER);
        copier_.copy_in(offset, count, tcm);
    }

  private:
    const nt_customop_meta *m_;
    mutable nt_customop::Copier copier_;
};

template <class T, size_t N> TensorAccessor<T, N, false> Tensor::accessor() &
{
    static_assert(N >= 1 && N <= NT_CUSTOMOP_MAX_DIMS, "an accessor has 1 to 8 dimensions");
    return TensorAccessor<T, N, false>(m_, m_->hbm_addr, 0, true);
}
template <class T, size_t N> TensorAccessor<T, N, true> Tensor::accessor() const &
{
    static_assert(N >= 1 && N <= NT_CUSTOMOP_MAX_DIMS, "an accessor has 1 to 8 dimensions");
    return TensorAccessor<T, N, true>(m_, m_->hbm_addr, 0, true);
}
template <class T> TensorReadStreamAccessor<T> Tensor::read_stream_accessor() const &
{
    return TensorReadStreamAccessor<T>(m_);
}
template <class T> TensorWriteStreamAccessor<T> Tensor::write_stream_accessor() &
{
    return TensorWriteStreamAccessor<T>(m_);
}
inline TensorTcmAccessor<false> Tensor::tcm_accessor() & { return TensorTcmAccessor<false>(m_); }
inline TensorTcmAccessor<true> Tensor::tcm_accessor() const & { return TensorTcmAccessor<true>(m_); }
inline c10::Q7PtrType Tensor::q7_data_ptr() const
{
    c10::Q7PtrType p = {m_->hbm_addr, nt_customop_ctx(nt_customop::kCoreCtx), false};
    return p;
}

} // namespace at

#endif /* NEURON_CUSTOMOP_HOST_ACCESSORS_HPP */
