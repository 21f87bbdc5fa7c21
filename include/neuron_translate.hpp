/*
 * neuron_translate.hpp: tensor access for C++ custom operators, over neuron_translate.h.
 *
 * Header-only C++14, written once (not generated) and installed beside neuron_translate.h.
 * It compiles for the device (clang for Xtensa with -ffreestanding -fno-exceptions
 * -fno-rtti: no heap, no exceptions, no standard library, only the compiler's own headers
 * and builtins) and for the host, where the pointers it hands out read and write the host
 * model's SoC memory.
 *
 * THE STALE-POINTER RULE. A local pointer that neuron_translate returned is valid until
 * the next translate call, of any tensor: a call that misses refills one of the three
 * reusable windows (0, 1, 2 in turn), and every pointer into the window it replaces then
 * reads and writes the new region. Pinned windows (3 and 4) never move. Keeping a pointer
 * across another tensor's translate is the bug this header exists to prevent:
 *
 *   - neuron::Tensor<T>::get / set translate once per element, as the original's accessor
 *     does: always right, slow.
 *   - neuron::for_each(first, n, f, views...) translates each view once per stretch of
 *     elements that lies in one window of every view, checks in the window table that all
 *     of those windows are resident together, and only then calls f with the local
 *     pointers: they stay valid for the whole call, as long as f itself translates nothing.
 *     When they cannot all be resident at once (more views needing a refill than there are
 *     reusable windows, or an element that straddles a window boundary), it copies the
 *     stretch through small bounce buffers on the stack instead: slower, never stale.
 *
 * Elements that straddle a window boundary (a T whose size does not divide the window
 * size, or a base address not aligned to sizeof(T)) are read and written correctly, byte
 * by byte through a bounce copy, one translate per part. So are views whose base is not
 * aligned to alignof(T): the walk never hands out a misaligned T*, it bounces them.
 *
 * Errors never fault: a translate that fails (a NULL context) or an index out of range
 * makes get() return a zeroed T and set(), copy_in(), copy_out() and for_each() return
 * false, having touched nothing beyond the elements already done.
 */

#ifndef NEURON_TRANSLATE_HPP
#define NEURON_TRANSLATE_HPP

#if !defined(__cplusplus) || __cplusplus < 201402L
#error "neuron_translate.hpp needs C++14 or later: compile with -std=c++14"
#else

#include "neuron_translate.h"

/*
 * Everything below is in namespace `neuron`, unless the includer names another with
 * NEURON_TRANSLATE_NAMESPACE first (the custom-op SDK does, so that a kernel's `using
 * namespace torch;` leaves `neuron::` meaning torch::neuron alone).
 */
#ifndef NEURON_TRANSLATE_NAMESPACE
#define NEURON_TRANSLATE_NAMESPACE neuron
#endif

namespace NEURON_TRANSLATE_NAMESPACE {

/// A 64-bit SoC (HBM) address.
using soc_addr = unsigned long long;

namespace detail {

template <class T> struct remove_const {
    using type = T;
};
template <class T> struct remove_const<const T> {
    using type = T;
};
template <class T> constexpr bool is_const = false;
template <class T> constexpr bool is_const<const T> = true;

template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> {
    using type = T;
};
/// Whether T is const U: a read-only view of U's elements, the one conversion a view has.
template <class T, class U> constexpr bool adds_const = false;
template <class U> constexpr bool adds_const<const U, U> = true;

template <unsigned long... I> struct seq {};
template <unsigned long N, unsigned long... I> struct make_seq : make_seq<N - 1, N - 1, I...> {};
template <unsigned long... I> struct make_seq<0, I...> {
    using type = seq<I...>;
};

constexpr unsigned long round_up(unsigned long v, unsigned long align)
{
    return (v + align - 1) / align * align;
}

// The device has no divider and links no libgcc: no 64-bit multiply or any division by a
// size that is not a power of two may reach the code generator. These do it by hand.

/// i * S, S a compile-time size below 2^16, from 32-bit multiplies (a 64-bit one would be
/// a libgcc call on the device): each 16-bit half of the low word times S fits 32 bits,
/// and of the high word's product only the low 32 bits count.
template <unsigned long long S> inline unsigned long long times(unsigned long long i)
{
    static_assert(S < 0x10000, "element types of 64 KiB or more are not supported");
    const uint32_t s = static_cast<uint32_t>(S), lo = static_cast<uint32_t>(i), hi = static_cast<uint32_t>(i >> 32);
    return static_cast<unsigned long long>((lo & 0xFFFFu) * s) +
           (static_cast<unsigned long long>((lo >> 16) * s) << 16) +
           (static_cast<unsigned long long>(hi * s) << 32);
}

template <unsigned long long S> constexpr unsigned log2_of()
{
    unsigned b = 0;
    while ((1ull << b) < S)
        ++b;
    return b;
}

/// bytes / S for bytes below 2^32 (a span), S a compile-time size: a shift for a power of
/// two, otherwise a shift-and-subtract division of 32 steps.
template <unsigned long long S> inline unsigned long long per(unsigned long long bytes)
{
    uint32_t b = bytes > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<uint32_t>(bytes);
    // A constant condition (C++14 has no `if constexpr`): the code generator keeps one
    // branch.
    if ((S & (S - 1)) == 0) {
        return b >> log2_of<S>();
    } else {
        uint32_t q = 0;
        unsigned long long r = 0;
        for (int bit = 31; bit >= 0; --bit) {
            r = (r << 1) | ((b >> bit) & 1u);
            if (r >= S) {
                r -= S;
                q |= 1u << bit;
            }
        }
        return q;
    }
}

/// Bytes of stack each view gets in a bounce: at least one element.
constexpr unsigned long kBounceBytes = 256;
/// The most stack for_each's bounce buffers may take, all views together (the device's
/// default stack is about 8 KiB): 16 views of elements up to 256 bytes fit.
constexpr unsigned long kBounceStack = 4096;
template <class T> constexpr unsigned long bounce_bytes()
{
    return sizeof(T) > kBounceBytes ? sizeof(T) : kBounceBytes;
}

/// What one translate gives: the local address of an SoC address and how many bytes from
/// there translate contiguously through the same window (0 with a NULL local).
struct Stretch {
    void *local;
    unsigned long long bytes;
};

inline Stretch translate(void *ctx, soc_addr addr, unsigned long long len)
{
    unsigned long long span = 0;
    void *local = neuron_translate_span(ctx, addr, len, &span);
    return {local, local ? span : 0};
}

/// Whether `addr` translates to `local` through the table now, read from the table
/// without translating: the first window whose tag matches, and its local address
/// (neuron_translate.h, _map_record_t).
inline bool resident(const void *ctx, soc_addr addr, const void *local)
{
    const _translation_ctx_t *t = static_cast<const _translation_ctx_t *>(ctx);
    for (unsigned k = 0; k < NEURON_TRANSLATE_RECORDS; ++k) {
        const _map_record_t &r = t->records[k];
        if ((addr & r.mask) == r.ptr) {
            uint32_t at = r.window + (static_cast<uint32_t>(addr) & ~static_cast<uint32_t>(r.mask));
            return static_cast<uintptr_t>(at) == reinterpret_cast<uintptr_t>(local);
        }
    }
    return false;
}

/// Copies n bytes of SoC memory at addr to dst, one translate per stretch, each pointer
/// used before the next translate.
inline bool read_bytes(void *ctx, soc_addr addr, void *dst, unsigned long long n)
{
    unsigned char *d = static_cast<unsigned char *>(dst);
    while (n > 0) {
        Stretch s = translate(ctx, addr, n);
        if (s.bytes == 0)
            return false;
        __builtin_memcpy(d, s.local, static_cast<size_t>(s.bytes));
        d += s.bytes;
        addr += s.bytes;
        n -= s.bytes;
    }
    return true;
}

/// Copies n bytes from src to SoC memory at addr, one translate per stretch.
inline bool write_bytes(void *ctx, soc_addr addr, const void *src, unsigned long long n)
{
    const unsigned char *s8 = static_cast<const unsigned char *>(src);
    while (n > 0) {
        Stretch s = translate(ctx, addr, n);
        if (s.bytes == 0)
            return false;
        __builtin_memcpy(s.local, s8, static_cast<size_t>(s.bytes));
        s8 += s.bytes;
        addr += s.bytes;
        n -= s.bytes;
    }
    return true;
}

template <class T> inline bool aligned_for(const void *p)
{
    return reinterpret_cast<uintptr_t>(p) % alignof(T) == 0;
}

} // namespace detail

/**
 * A view of `count` elements of a trivially copyable T in SoC memory at `base`, through
 * the window table `ctx` (by default the one _init_translate_ctx built). Copying a view
 * copies the reference, not the elements. Tensor<const T> is a read-only view: for_each
 * then hands out const T* and never writes its elements back.
 */
template <class T> class Tensor {
  public:
    using value_type = typename detail::remove_const<T>::type;
    static_assert(__is_trivially_copyable(value_type), "a Tensor's element type must be trivially copyable");
    static_assert(sizeof(value_type) > 0, "a Tensor's element type must have a size");

    /// A view of `count` elements at `base`; refused (ok() false, no element in it) when
    /// its bytes would not fit 64 bits or would run past the top of the address space.
    Tensor(void *ctx, soc_addr base, unsigned long long count)
        : ctx_(ctx), base_(base), count_(fits(base, count) ? count : 0), refused_(!fits(base, count))
    {
    }
    /// Through the table neuron_translate_ctx() gives now (call _init_translate_ctx first).
    Tensor(soc_addr base, unsigned long long count) : Tensor(neuron_translate_ctx(), base, count) {}
    /// A read-only view of a writable one of the same element type. No other conversion:
    /// a view of a base class over derived elements would step by the wrong size.
    template <class U, class = typename detail::enable_if<detail::adds_const<T, U>>::type>
    Tensor(const Tensor<U> &other) : Tensor(other.ctx(), other.base(), other.size())
    {
        refused_ = !other.ok();
    }

    /// Whether the view was accepted (see the constructor); a refused one has no element.
    bool ok() const { return !refused_; }

    void *ctx() const { return ctx_; }
    soc_addr base() const { return base_; }
    unsigned long long size() const { return count_; }
    /// The SoC address of element i.
    soc_addr address(unsigned long long i) const { return base_ + detail::times<sizeof(value_type)>(i); }
    /// n elements in bytes.
    static unsigned long long bytes(unsigned long long n) { return detail::times<sizeof(value_type)>(n); }
    /// Whether [first, first + n) lies in the view.
    bool covers(unsigned long long first, unsigned long long n) const
    {
        return !refused_ && first <= count_ && n <= count_ - first;
    }

    /// Element i: one neuron_translate, as the original's accessor (and, for an element
    /// that straddles a window boundary or is misaligned, a byte-wise copy with a translate
    /// per part); a zeroed value if i is out of range or the translate fails.
    value_type get(unsigned long long i) const
    {
        value_type v{};
        if (!load(i, v))
            v = value_type{};
        return v;
    }

    /// Element i into out, as get(); false (out unspecified) if i is out of range or a
    /// translate fails.
    bool load(unsigned long long i, value_type &out) const
    {
        bool ok = false;
        if (void *p = whole(i, ok)) {
            out = *static_cast<const value_type *>(p);
            return true;
        }
        // A straddling or misaligned element: byte-wise, a translate per window part.
        return ok && detail::read_bytes(ctx_, address(i), &out, sizeof(value_type));
    }

    /// Writes v to element i, one translate (more if it straddles); false if i is out of
    /// range or a translate fails.
    bool set(unsigned long long i, const value_type &v) const
    {
        static_assert(!detail::is_const<T>, "set() on a read-only Tensor<const T>");
        bool ok = false;
        if (void *p = whole(i, ok)) {
            *static_cast<value_type *>(p) = v;
            return true;
        }
        return ok && detail::write_bytes(ctx_, address(i), &v, sizeof(value_type));
    }

    /// Copies elements [first, first + n) to local memory at dst, one translate per
    /// window stretch; false if the range is not in the view or a translate fails.
    bool copy_out(unsigned long long first, unsigned long long n, value_type *dst) const
    {
        return covers(first, n) && detail::read_bytes(ctx_, address(first), dst, bytes(n));
    }

    /// Copies n elements from local memory at src to [first, first + n).
    bool copy_in(unsigned long long first, unsigned long long n, const value_type *src) const
    {
        static_assert(!detail::is_const<T>, "copy_in() on a read-only Tensor<const T>");
        return covers(first, n) && detail::write_bytes(ctx_, address(first), src, bytes(n));
    }

    /// Calls f(index, len, T *p) for each stretch of [first, first + n) that lies in one
    /// window: p[0..len) are elements index..index + len (len a size_t: a stretch is below
    /// 2^32 bytes, and a 32-bit loop counter is what the device loops fastest over).
    /// neuron::for_each with one view.
    template <class F> bool for_each_span(unsigned long long first, unsigned long long n, F &&f) const;

  private:
    /// Element i's local address, one neuron_translate, if the element lies there whole
    /// and aligned: its last byte translates to the pointer's last byte too (read from the
    /// table; nothing translated, nothing moved). Null otherwise, with `ok` false if i is
    /// out of range or the translate failed (true: a straddling or misaligned element).
    void *whole(unsigned long long i, bool &ok) const
    {
        constexpr unsigned long last = sizeof(value_type) - 1;
        ok = false;
        if (i >= count_)
            return nullptr;
        void *p = neuron_translate(ctx_, address(i));
        if (!p)
            return nullptr;
        ok = true;
        if (!detail::aligned_for<value_type>(p))
            return nullptr;
        if (last == 0 || detail::resident(ctx_, address(i) + last, static_cast<unsigned char *>(p) + last))
            return p;
        return nullptr;
    }

    /// Whether count elements from base fit: count * sizeof(T) below 2^64 (a compile-time
    /// bound: no division on the device) and base + that below 2^64 (it does not wrap).
    static bool fits(soc_addr base, unsigned long long count)
    {
        constexpr unsigned long long most = ~0ull / sizeof(value_type);
        return count <= most && bytes(count) <= ~0ull - base;
    }

    void *ctx_;
    soc_addr base_;
    unsigned long long count_;
    bool refused_;
};

namespace detail {

/// Translates view v at element i for at most `left` elements: its local pointer, and how
/// many whole elements from there lie in its window (0 if the pointer cannot be handed
/// out as a T*: a straddling first element, a misaligned base, a failed translate). A
/// span never reaches 2^32 bytes, so at most that much is asked for.
template <class T> inline unsigned long long stretch_of(const Tensor<T> &v, unsigned long long i,
                                                        unsigned long long left, void *&local, bool &failed)
{
    using V = typename Tensor<T>::value_type;
    constexpr unsigned long long most = 0xFFFFFFFFull / sizeof(V);
    Stretch s = translate(v.ctx(), v.address(i), static_cast<uint32_t>(left < most ? left : most) * sizeof(V));
    local = s.local;
    failed = failed || s.bytes == 0;
    return aligned_for<V>(s.local) ? per<sizeof(V)>(s.bytes) : 0;
}

/// Whether the len elements of view v from i (len of one span: below 2^32 bytes) still
/// translate to local..local + len.
template <class T> inline bool still_resident(const Tensor<T> &v, unsigned long long i, unsigned long long len,
                                             void *local)
{
    uint32_t last = static_cast<uint32_t>(len) * sizeof(typename Tensor<T>::value_type) - 1;
    return resident(v.ctx(), v.address(i), local) &&
           resident(v.ctx(), v.address(i) + last, static_cast<unsigned char *>(local) + last);
}

template <class... Ts> constexpr unsigned long max_align()
{
    unsigned long a = 1, all[] = {alignof(typename Tensor<Ts>::value_type)...};
    for (unsigned long x : all)
        a = x > a ? x : a;
    return a;
}

/// Where view k's bounce buffer starts in the block of views Ts (k = the count: the
/// block's size).
template <class... Ts> constexpr unsigned long bounce_offset(unsigned long k)
{
    unsigned long sizes[] = {bounce_bytes<typename Tensor<Ts>::value_type>()...};
    unsigned long aligns[] = {alignof(typename Tensor<Ts>::value_type)...};
    unsigned long at = 0;
    for (unsigned long j = 0; j < k; ++j)
        at = round_up(at, aligns[j]) + sizes[j];
    return k < sizeof...(Ts) ? round_up(at, aligns[k]) : at;
}

/// Elements of every view that fit in their bounce buffers at once.
template <class... Ts> constexpr unsigned long long bounce_elements()
{
    unsigned long long fit[] = {bounce_bytes<typename Tensor<Ts>::value_type>() /
                                sizeof(typename Tensor<Ts>::value_type)...};
    unsigned long long m = fit[0];
    for (unsigned long long x : fit)
        m = x < m ? x : m;
    return m;
}

/// The bounce buffers of views Ts, one block of bytes on the stack.
template <class... Ts> struct Bounce {
    alignas(max_align<Ts...>()) unsigned char bytes[bounce_offset<Ts...>(sizeof...(Ts))];
    template <class T> T *at(unsigned long k) { return reinterpret_cast<T *>(bytes + bounce_offset<Ts...>(k)); }
};

/// Rounds of translation tried before a stretch is bounced: a view whose window a later
/// view's refill replaced is translated again (it then refills the oldest reusable window).
constexpr int kRounds = 3;

template <class F, class... Ts, unsigned long... I>
bool walk(seq<I...>, unsigned long long first, unsigned long long n, F &f, const Tensor<Ts> &...views)
{
    constexpr unsigned long N = sizeof...(Ts);
    unsigned long long i = first;
    const unsigned long long end = first + n;
    while (i < end) {
        const unsigned long long left = end - i;
        void *locals[N];
        unsigned long long len = 0;
        bool failed = false, live = false;
        for (int round = 0; round < kRounds && !live && !failed; ++round) {
            unsigned long long whole[N] = {stretch_of(views, i, left, locals[I], failed)...};
            len = left;
            for (unsigned long long w : whole)
                len = w < len ? w : len;
            if (len == 0)
                break; // a straddling element or a misaligned view: no round helps
            bool all[N] = {still_resident(views, i, len, locals[I])...};
            live = true;
            for (bool b : all)
                live = live && b;
        }
        if (failed)
            return false;
        if (live) {
            f(i, static_cast<size_t>(len), static_cast<Ts *>(locals[I])...);
            i += len;
            continue;
        }
        // Bounce: through buffers on the stack, each view read with a translate per window
        // stretch, f called on the copies, the writable views written back.
        Bounce<Ts...> b;
        unsigned long long m = bounce_elements<Ts...>();
        m = m < left ? m : left;
        bool read[N] = {read_bytes(views.ctx(), views.address(i), b.template at<typename Tensor<Ts>::value_type>(I),
                                   static_cast<uint32_t>(m) * sizeof(typename Tensor<Ts>::value_type))...};
        for (bool ok : read)
            if (!ok)
                return false;
        f(i, static_cast<size_t>(m), b.template at<Ts>(I)...);
        bool wrote[N] = {(is_const<Ts> || write_bytes(views.ctx(), views.address(i), b.template at<Ts>(I),
                                                      static_cast<uint32_t>(m) * sizeof(typename Tensor<Ts>::value_type)))...};
        for (bool ok : wrote)
            if (!ok)
                return false;
        i += m;
    }
    return true;
}

/// Whether two writable views share a byte of elements [first, first + n): their
/// write-backs would then depend on the order (and on whether the stretch bounced), so
/// for_each refuses them. A read-only view may alias a writable one.
template <class... Ts> bool writable_overlap(unsigned long long first, unsigned long long n, const Tensor<Ts> &...views)
{
    constexpr unsigned long N = sizeof...(Ts);
    const soc_addr lo[N] = {views.address(first)...};
    const soc_addr hi[N] = {(views.address(first) + Tensor<Ts>::bytes(n))...};
    const bool writable[N] = {!is_const<Ts>...};
    for (unsigned long j = 0; j < N; ++j)
        for (unsigned long k = 0; k < j; ++k)
            if (writable[j] && writable[k] && lo[j] < hi[k] && lo[k] < hi[j])
                return true;
    return false;
}

} // namespace detail

/**
 * Walks elements [first, first + n) of every view in lockstep (element-wise kernels:
 * c[i] = a[i] + b[i]): calls f(unsigned long long index, size_t len, T1 *p1, T2 *p2, ...)
 * for each joint stretch, where pk[0..len) are elements index..index + len of view k. Each view is translated
 * once per joint stretch; f is called only once the window table shows every view's
 * stretch resident at once, so all the pointers stay valid for the whole call (f must not
 * translate). When that cannot be had (more views needing a refill than the three reusable
 * windows, a straddling element, a misaligned base), the stretch goes through bounce
 * buffers on the stack (256 bytes a view, or one element if larger): f sees copies, and
 * the writable views' copies are written back after it returns.
 *
 * Views that f writes should be Tensor<T>, views it only reads Tensor<const T> (a
 * writable view's bounced copy is written back whether or not f changed it). Two writable
 * views whose elements in the range share a byte are refused: their write-backs would
 * decide the result by their order. The bounce buffers take sizeof(Bounce) bytes of stack,
 * at most 4 KiB (a compile-time check). Returns false, having touched nothing, if the
 * range is not in every view or writable views overlap; false if a translate fails.
 */
template <class F, class... Ts>
bool for_each(unsigned long long first, unsigned long long n, F &&f, const Tensor<Ts> &...views)
{
    static_assert(sizeof...(Ts) > 0, "for_each needs at least one view");
    static_assert(sizeof(detail::Bounce<Ts...>) <= detail::kBounceStack,
                  "for_each's bounce buffers would take more than 4 KiB of stack: fewer views or smaller elements");
    bool in_range[] = {views.covers(first, n)...};
    for (bool ok : in_range)
        if (!ok)
            return false;
    if (detail::writable_overlap(first, n, views...))
        return false;
    return detail::walk(typename detail::make_seq<sizeof...(Ts)>::type{}, first, n, f, views...);
}

template <class T>
template <class F>
bool Tensor<T>::for_each_span(unsigned long long first, unsigned long long n, F &&f) const
{
    return NEURON_TRANSLATE_NAMESPACE::for_each(first, n, f, *this);
}

} // namespace NEURON_TRANSLATE_NAMESPACE

#endif /* C++14 */

#endif /* NEURON_TRANSLATE_HPP */
