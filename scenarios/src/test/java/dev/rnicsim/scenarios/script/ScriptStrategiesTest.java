package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.scenarios.charts.ChartData;
import dev.rnicsim.scenarios.charts.Charts;
import dev.rnicsim.scenarios.cli.Catalogue;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The verbs of the registration strategies: pool, alloc, free, cache, acquire, release, invalidate, close and show of
 * pools and caches, fragments and handles in SGLs and as remote addresses; each one's success and its error
 * outcomes, malformed uses, and the catalogue scenarios built on them.
 */
class ScriptStrategiesTest
{
    /**
     * Lines 1 to 17: two connectx5 hosts, a PD, CQ and QP each, the QPs connected, a 64 KiB buffer on alpha and a
     * 64 KiB target MR with remote rights on beta.
     */
    private static final String TWO_HOSTS = ScriptRun.TWO_CONNECTED_HOSTS + """
        mmap buf app_a 64K
        mmap dst app_b 64K
        reg mr_dst pd_b dst 64K access=local_write,remote_write,remote_read
        write dst "untouched"
        """;

    /** The line number of the first line after {@link #TWO_HOSTS}. */
    private static final int NEXT = 18;

    private static ScriptRun run(final String text)
    {
        return ScriptRun.run("s.rsim", text);
    }

    private static ScriptRun ok(final String text)
    {
        final ScriptRun r = ScriptRun.ok("s.rsim", text);
        assertThat(r.out()).doesNotContain("FAILED");
        return r;
    }


    // ------------------------------------------------------------------ pool, alloc, free

    @Test
    void poolShouldRegisterAChunkAtTheFirstAllocOnlyAndHandOutFragmentsWithItsKeys()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            pool p pd_a 1M chunks=2 min=4K access=local_write,remote_write
            expect p.registrations == 0
            expect p.live == 0
            expect nic_a.sim_mr_live == 0
            alloc f1 p 100
            expect p.registrations == 1
            expect p.misses == 1
            expect p.live == 1
            expect p.live_bytes == 1M
            expect nic_a.sim_mr_live == 1
            alloc f2 p 5000
            expect p.registrations == 1
            expect p.hits == 1
            expect p.fragments == 2
            expect f1.length == 100
            expect f2.length == 5000
            expect f1.lkey == f2.lkey
            expect f1.rkey == f2.rkey
            expect f2.addr >= f1.addr+4K
            expect f2.addr-f1.addr < 1M
            expect p.bytes_registered == 1M
            show pool p
            """);

        assertThat(r.out()).contains("pool p: chunks of 1 MiB (4k pages, at most 2), fragments of 4 KiB to 1 MiB "
            + "(buddy), access [LOCAL_WRITE, REMOTE_WRITE]; nothing registered until the first alloc");
        assertThat(r.out()).containsPattern("alloc f1: 0x[0-9a-f]+, 100 B \\(a block of 4 KiB\\), lkey=0x[0-9a-f]{8} "
            + "rkey=0x[0-9a-f]{8}; no chunk had room: a chunk of 1 MiB mapped and registered \\(chunk 1 of at most 2, "
            + "[0-9.]+ us\\)");
        assertThat(r.out()).containsPattern("alloc f2: 0x[0-9a-f]+, 5000 B \\(a block of 8 KiB\\), .*from a registered"
            + " chunk: no registration");
        assertThat(r.out()).contains("pool p: chunks of 1 MiB (at most 2), fragments of 4 KiB to 1 MiB, access "
            + "[LOCAL_WRITE, REMOTE_WRITE]\n    hits 1, misses 1, evictions 0, invalidations 0\n    registrations 1 "
            + "(1 MiB registered in all); live 1 MR(s), 1 MiB\n    2 fragment(s) out");
    }

    @Test
    void fragmentsShouldServeAloneOrAsAddressesInSglsAndAsRemoteAddressesWithTheirKeys()
    {
        ok(TWO_HOSTS + """
            pool p pd_a 64K access=local_write,remote_write,remote_read
            alloc head p 6
            alloc body p 5
            write head "hello "
            write body "world"
            post write qp_a sgl=head,body remote=mr_dst
            poll cq_a
            expect SUCCESS
            expect last.byte_len == 11
            expect bytes dst "hello world"
            post write qp_a sgl=head+1:3,body:2 remote=mr_dst+100
            poll cq_a
            expect SUCCESS
            expect bytes dst+100 "ellwo"
            post write qp_a sgl=head:6:head.lkey remote=mr_dst+200
            poll cq_a
            expect SUCCESS
            expect bytes dst+200 "hello "
            post read qp_b sgl=mr_dst+300:5 remote=body
            poll cq_b
            expect SUCCESS
            expect bytes dst+300 "world"
            post write qp_b sgl=mr_dst:5 remote=body+2
            poll cq_b
            expect SUCCESS
            expect bytes body "wohel"
            """);
    }

    @Test
    void freeShouldGiveTheBlockBackWithoutDeregisteringAndTheNextAllocShouldReuseIt()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            pool p pd_a 64K
            alloc f p 16K
            let first f.addr
            free f
            expect p.fragments == 0
            expect p.live == 1
            expect nic_a.sim_mr_deregistrations == 0
            alloc f p 16K
            expect f.addr == first
            expect p.registrations == 1
            """);

        assertThat(r.out()).containsPattern("free f\\n    0x[0-9a-f]+ back in the pool \\(merged with free buddies\\); "
            + "its chunk stays registered; 0 fragment\\(s\\) out");
    }

    @Test
    void poolShouldRegisterAnotherChunkWhenFullAndFailWithEnomemNamingMaxChunks()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            pool p pd_a 64K chunks=2
            alloc a p 64K
            alloc b p 32K
            expect p.registrations == 2
            expect a.lkey != b.lkey
            alloc c p 32K
            expect p.registrations == 2
            alloc d p 4K
            expect ENOMEM
            expect p.fragments == 3
            """);

        assertThat(r.out()).contains("-> ENOMEM: alloc: no free block of 4096 bytes in 2 chunks"
            + " = maxChunks=2 of 65536 bytes");
    }

    static Stream<Arguments> poolFailures()
    {
        return Stream.of(
            Arguments.of("chunk not a power of two", "pool p pd_a 1000", "EINVAL",
                "chunk size 1000 bytes: expected a power of two of at least 4096"),
            Arguments.of("chunk below 4 KiB", "pool p pd_a 2K", "EINVAL", "chunk size 2048 bytes: expected"),
            Arguments.of("min below 64 bytes", "pool p pd_a 64K min=32", "EINVAL",
                "smallest fragment 32 bytes: expected a power of two from 64 to the chunk size, 65536"),
            Arguments.of("min above the chunk", "pool p pd_a 64K min=128K", "EINVAL", "smallest fragment 131072 bytes"),
            Arguments.of("no chunks", "pool p pd_a 64K chunks=0", "EINVAL", "at most 0 chunks: expected 1 or more"),
            Arguments.of("alloc of 0 bytes", "pool p pd_a 64K\nalloc f p 0", "EINVAL",
                "bytes=0 must be from 1 to chunkBytes=65536"),
            Arguments.of("alloc above the chunk", "pool p pd_a 64K\nalloc f p 64K+1", "EINVAL",
                "bytes=65537 must be from 1 to chunkBytes=65536"),
            Arguments.of("double free", "pool p pd_a 64K\nalloc f p 4K\nfree f\nfree f", "EINVAL",
                "is not allocated from this pool (double free?)"),
            Arguments.of("free after the pool is closed", "pool p pd_a 64K\nalloc f p 4K\nclose p\nfree f", "EINVAL",
                "free: the pool is closed"),
            Arguments.of("alloc from a closed pool", "pool p pd_a 64K\nclose p\nalloc f p 4K", "EINVAL",
                "alloc: the pool is closed"),
            Arguments.of("chunk above RLIMIT_MEMLOCK", "pool p pd_a 16M\nalloc f p 4K", "ENOMEM", "ibv_reg_mr"),
            Arguments.of("2 MiB chunks without a hugetlb pool", "pool p pd_a 2M backing=2m\nalloc f p 4K", "ENOMEM",
                "mmap"),
            Arguments.of("chunk registered in a closed PD", "pool p pd_a 64K\nclose pd_a\nalloc f p 4K", "EINVAL",
                "the PD is closed"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("poolFailures")
    void poolVerbsShouldFailWithTheirErrnoAndWhy(final String what, final String lines, final String errno,
        final String why)
    {
        final ScriptRun r = ok(TWO_HOSTS + lines + "\nexpect " + errno + "\n");

        assertThat(r.out()).containsPattern("-> " + errno + ": .*" + Pattern.quote(why));
    }

    @Test
    void poolFailingWithoutAnExpectShouldStopTheRunAtItsLine()
    {
        final ScriptRun r = run(TWO_HOSTS + "pool p pd_a 1000\nsay never\n");

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).startsWith("s.rsim:" + NEXT + ": unexpected EINVAL");
    }

    @Test
    void poolOfHugePagesShouldCutTheMttEntriesOfItsChunk()
    {
        ok("""
            host h ram=1G hugepages2m=2 memlock=unlimited aged=yes
            device d h
            open c d
            pd p c
            pool small p 2M
            alloc f small 4K
            let entries_4k d.sim_mtt_entries_in_use
            close small
            pool huge p 2M backing=2m
            alloc g huge 4K
            expect d.sim_mtt_entries_in_use == 1
            expect entries_4k == 512
            expect h.hugepages_free_2m == 1
            close huge
            expect h.hugepages_free_2m == 2
            """);
    }

    @Test
    void closeOfAPoolShouldDeregisterItsChunksAndLeaveFragmentsWithDeadKeys()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            pool p pd_a 64K chunks=4
            alloc a p 64K
            alloc b p 4K
            expect nic_a.sim_mr_live == 2
            close p
            expect nic_a.sim_mr_live == 0
            expect p.live == 0
            post write qp_a sgl=b remote=mr_dst
            poll cq_a
            expect LOC_PROT_ERR
            """);

        assertThat(r.out()).contains("closed: 2 chunk MR(s) (128 KiB) deregistered and unmapped; 2 fragment(s) still "
            + "out are invalid now (their keys no longer translate)");
    }

    @Test
    void closeOfAPoolAfterItsProcessExitedShouldReportTheFailureAndStillReleaseEveryChunk()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            pool p pd_a 64K
            alloc f p 4K
            exit app_a
            close p
            expect EINVAL
            expect p.live == 0
            close p
            expect ok
            """);

        assertThat(r.out()).contains("-> EINVAL: munmap: process 1000 (app_a) has exited");
    }

    // ------------------------------------------------------------------ cache, acquire, release, invalidate

    @Test
    void cacheShouldMissThenHitOnACoveredRangeAndWidenToPages()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            cache c pd_a
            acquire h c buf+100 5000
            expect h.hit == 0
            expect h.addr == buf+100
            expect h.length == 5000
            expect c.misses == 1
            expect c.registrations == 1
            expect c.bytes_registered == 8K
            expect c.live == 1
            expect c.live_bytes == 8K
            expect c.idle == 0
            release h
            expect c.idle == 1
            acquire h2 c buf+4K 10
            expect h2.hit == 1
            expect h2.lkey == h.lkey
            expect h2.rkey == h.rkey
            expect c.hits == 1
            expect c.registrations == 1
            acquire h3 c buf+6K 4K
            expect h3.hit == 0
            expect c.live == 2
            show cache c
            """);

        assertThat(r.out()).containsPattern("acquire h: miss: registered MR 0x[0-9a-f]+\\+8 KiB lkey=0x[0-9a-f]{8} "
            + "rkey=0x[0-9a-f]{8} access \\[LOCAL_WRITE\\] \\(the range widened to 4 KiB pages\\); [0-9.]+ us");
        assertThat(r.out()).containsPattern("acquire h2: hit: MR 0x[0-9a-f]+\\+8 KiB .*, registered earlier; no "
            + "registration");
        assertThat(r.out()).contains("released: the MR stays registered for later hits; 1 idle, 1 MR(s) held");
        assertThat(r.out()).contains("cache c: bounds: no region bound, no byte bound; munmap does not invalidate "
            + "(hook=no)\n    hits 1, misses 2, evictions 0, invalidations 0\n    registrations 2 (16 KiB registered "
            + "in all); live 2 MR(s), 16 KiB\n    0 idle MR(s)");
    }

    @Test
    void handlesShouldServeAloneOrAsAddressesInSglsAndAsRemoteAddresses()
    {
        ok(TWO_HOSTS + """
            cache c pd_a
            write buf+4K "cached bytes"
            acquire h c buf+4K 12 access=local_write,remote_read
            post write qp_a sgl=h remote=mr_dst
            poll cq_a
            expect SUCCESS
            expect last.byte_len == 12
            expect bytes dst "cached bytes"
            post write qp_a sgl=h+7:5 remote=mr_dst+100
            poll cq_a
            expect SUCCESS
            expect bytes dst+100 "bytes"
            post read qp_b sgl=mr_dst+200:6 remote=h
            poll cq_b
            expect SUCCESS
            expect bytes dst+200 "cached"
            """);
    }

    @Test
    void acquireShouldMissWhenTheCachedMrLacksTheRightsAndHitOnOneWithMore()
    {
        ok(TWO_HOSTS + """
            cache c pd_a
            acquire h1 c buf 64K
            release h1
            acquire h2 c buf 64K access=local_write,remote_write
            expect h2.hit == 0
            expect h2.rkey != h1.rkey
            expect c.live == 2
            acquire h3 c buf+4K 4K access=remote_write
            expect h3.hit == 1
            expect h3.rkey == h2.rkey
            post write qp_b sgl=mr_dst:9 remote=h3
            poll cq_b
            expect SUCCESS
            expect bytes buf+4K "untouched"
            """);
    }

    @Test
    void releaseTwiceShouldFailWithEinval()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            cache c pd_a
            acquire h c buf 4K
            release h
            release h
            expect EINVAL
            expect c.idle == 1
            """);

        assertThat(r.out()).contains("-> EINVAL: RegistrationCache.release: handle released twice");
    }

    @Test
    void invalidateShouldDeregisterIdleEntriesNowAndEntriesInUseAtTheirRelease()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            cache c pd_a
            acquire idle c buf 4K
            release idle
            acquire busy c buf+8K 4K
            invalidate c buf 64K
            expect c.invalidations == 2
            expect c.live == 1
            expect nic_a.sim_mr_live == 1
            acquire again c buf+8K 4K
            expect again.hit == 0
            release busy
            expect c.live == 1
            expect nic_a.sim_mr_live == 1
            invalidate c buf+32K 4K
            expect c.invalidations == 2
            """);

        assertThat(r.out()).contains("2 entries dropped: 1 idle MR(s) deregistered now, 1 in use deregistered at "
            + "their release");
        assertThat(r.out()).contains("released: its entry was invalidated meanwhile, so the MR is deregistered now");
        assertThat(r.out()).contains("0 entries dropped: 0 idle MR(s) deregistered now");
    }

    @Test
    void hookShouldInvalidateAtEveryMunmapAndNoHookShouldKeepTheEntry()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            cache hooked pd_a hook=yes
            cache plain pd_a
            acquire a hooked buf 64K
            release a
            acquire b plain buf 64K
            release b
            munmap buf 64K
            expect hooked.invalidations == 1
            expect hooked.live == 0
            expect plain.invalidations == 0
            expect plain.live == 1
            """);

        assertThat(r.out()).containsPattern("cache hooked: bounds: no region bound, no byte bound; munmap hook "
            + "installed: every munmap in pid \\d+ invalidates the entries it overlaps");
        assertThat(r.out()).contains("cache plain: bounds: no region bound, no byte bound; no munmap hook: entries "
            + "outlive munmap unless 'invalidate' is called");
    }

    @Test
    void boundsShouldEvictTheLeastRecentlyUsedIdleEntry()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            cache c pd_a regions=2
            acquire a c buf 4K
            release a
            acquire b c buf+4K 4K
            release b
            acquire a2 c buf 4K
            expect a2.hit == 1
            release a2
            acquire x c buf+8K 4K
            expect c.evictions == 1
            release x
            acquire b2 c buf+4K 4K
            expect b2.hit == 0
            expect c.evictions == 2
            acquire x2 c buf+8K 4K
            expect x2.hit == 1
            acquire a3 c buf 4K
            expect ENOMEM
            """);

        assertThat(r.out()).containsPattern("acquire x: miss: .*, after evicting 1 idle MR\\(s\\), least recently used "
            + "first; ");
        assertThat(r.out()).contains("cache c: bounds: at most 2 MRs, no byte bound;");
        assertThat(r.out()).contains("-> ENOMEM: acquire: cache full: 2 MRs of 8192 bytes in "
            + "use, none idle; maxRegions=2");
    }

    static Stream<Arguments> cacheFailures()
    {
        return Stream.of(
            Arguments.of("no regions", "cache c pd_a regions=0", "EINVAL",
                "at most 0 regions: expected 1 or more"),
            Arguments.of("bytes below a page", "cache c pd_a bytes=100", "EINVAL", "at most 100 bytes: expected 4096 or more"),
            Arguments.of("empty range", "cache c pd_a\nacquire h c buf 0", "EINVAL", "is empty or wraps"),
            Arguments.of("closed cache", "cache c pd_a\nclose c\nacquire h c buf 4K", "EINVAL",
                "acquire: the cache is closed"),
            Arguments.of("full of entries in use", "cache c pd_a regions=1\nacquire a c buf 4K\nacquire b c buf+4K 4K",
                "ENOMEM", "cache full: 1 MRs of 4096 bytes in use, none idle; maxRegions=1"),
            Arguments.of("bytes bound below the range", "cache c pd_a bytes=8K\nacquire a c buf 64K", "ENOMEM",
                "maxBytes=8192 (a new MR of 65536 bytes)"),
            Arguments.of("remote write without local write", "cache c pd_a\nacquire h c buf 4K access=remote_write",
                "EINVAL", "ibv_reg_mr"),
            Arguments.of("unmapped memory", "cache c pd_a\nmunmap buf 64K\nacquire h c buf 4K", "EFAULT",
                "ibv_reg_mr"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cacheFailures")
    void cacheVerbsShouldFailWithTheirErrnoAndWhy(final String what, final String lines, final String errno,
        final String why)
    {
        final ScriptRun r = ok(TWO_HOSTS + lines + "\nexpect " + errno + "\n");

        assertThat(r.out()).containsPattern("-> " + errno + ": .*" + Pattern.quote(why));
    }

    @Test
    void acquireRefusedByTheDeviceShouldNameMaxMrAndTheIdleEntries()
    {
        final ScriptRun r = ok("""
            host h ram=256M
            device d h max_mr=2
            open c d
            pd p c
            mmap buf c 64K
            cache rc p
            acquire a rc buf 4K
            release a
            acquire b rc buf+4K 4K
            acquire x rc buf+8K 4K
            expect ENOMEM
            expect rc.live == 2
            expect rc.idle == 1
            """);

        assertThat(r.out()).contains("-> ENOMEM: acquire: ibv_reg_mr: MPT full: 2 "
            + "entries live, every one of the 2 usable indices (max_mr=2; index 0 is reserved)")
            .contains("; the cache holds 1 idle MRs (4096 bytes) that a bound on regions or bytes would have released");
    }

    @Test
    void closeOfACacheShouldDeregisterItsIdleEntriesAndLeaveThoseInUse()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            cache c pd_a
            acquire a c buf 4K
            release a
            acquire b c buf+4K 4K
            close c
            expect nic_a.sim_mr_live == 1
            post write qp_a sgl=b remote=mr_dst
            poll cq_a
            expect SUCCESS
            release b
            expect nic_a.sim_mr_live == 1
            close pd_a
            expect nic_a.sim_mr_live == 0
            """);

        assertThat(r.out()).contains("closed: 1 idle MR(s) deregistered; 1 in use stay registered (their handles' keys"
            + " work) until their PD is closed");
    }

    @Test
    void poolAndCacheNamesShouldHaveNoValueOfTheirOwn()
    {
        for (final String lines : new String[] {"pool p pd_a 64K\nlet x p\n", "cache p pd_a\nlet x p\n"})
        {
            final ScriptRunner runner = new ScriptRunner(new PrintWriter(new StringWriter(), true),
                ScriptRunner.Detail.FULL);

            assertThatThrownBy(() -> runner.run("v.rsim", TWO_HOSTS + lines, Path.of(".")))
                .isInstanceOf(ScriptException.class).hasMessageStartingWith("v.rsim:" + (NEXT + 1) + ": a ")
                .hasMessageContaining("has no value of its own; use a field, e.g. p.hits");
        }
    }

    @Test
    void showOfAPoolNamingACacheShouldFailWithFileAndLine()
    {
        final ScriptRunner runner = new ScriptRunner(new PrintWriter(new StringWriter(), true),
            ScriptRunner.Detail.FULL);

        assertThatThrownBy(() -> runner.run("v.rsim", TWO_HOSTS + "cache c pd_a\nshow pool c\n", Path.of(".")))
            .isInstanceOf(ScriptException.class).hasMessage("v.rsim:" + (NEXT + 1) + ": 'c' is no pool (a name from "
            + "'pool'); it is a registration cache (a name from 'cache')");
    }

    // ------------------------------------------------------------------ malformed scripts

    static Stream<Arguments> malformed()
    {
        return Stream.of(
            Arguments.of("pool without a chunk size", "pool p pd_a", "expected: " + Spec.VERBS.get("pool").usage()),
            Arguments.of("pool of a context", "pool p app_a 64K", "'app_a' is a context; expected the name of a PD"),
            Arguments.of("pool with a bad backing", "pool p pd_a 64K backing=3m", "'3m' is not one of [1g, 2m, 4k, "
                + "thp]"),
            Arguments.of("pool with a bad access word", "pool p pd_a 64K access=lw,xx", "'xx' is not one of"),
            Arguments.of("pool with an unknown option", "pool p pd_a 64K size=1", "'pool' has no option 'size'"),
            Arguments.of("pool named like a PD", "pool pd_a pd_a 64K", "'pd_a' names a PD already"),
            Arguments.of("alloc from a PD", "alloc f pd_a 4K", "'pd_a' is a PD; expected the name of a pool"),
            Arguments.of("alloc from a cache", "cache c pd_a\nalloc f c 4K",
                "'c' is a cache; expected the name of a pool"),
            Arguments.of("alloc without a size", "pool p pd_a 64K\nalloc f p", "expected: "
                + Spec.VERBS.get("alloc").usage()),
            Arguments.of("free of a buffer", "free buf", "'buf' is a buffer; expected the name of a fragment"),
            Arguments.of("free of a handle", "cache c pd_a\nacquire h c buf 4K\nfree h",
                "'h' is a handle; expected the name of a fragment"),
            Arguments.of("cache with a bad hook", "cache c pd_a hook=maybe", "'maybe' is not one of [no, yes]"),
            Arguments.of("cache with an unknown option", "cache c pd_a size=1", "'cache' has no option 'size'"),
            Arguments.of("acquire from a pool", "pool p pd_a 64K\nacquire h p buf 4K",
                "'p' is a pool; expected the name of a cache"),
            Arguments.of("acquire without a size", "cache c pd_a\nacquire h c buf", "expected: "
                + Spec.VERBS.get("acquire").usage()),
            Arguments.of("acquire of an undefined address", "cache c pd_a\nacquire h c nowhere 4K",
                "'nowhere' is neither a number"),
            Arguments.of("release of a fragment", "pool p pd_a 64K\nalloc f p 4K\nrelease f",
                "'f' is a fragment; expected the name of a handle"),
            Arguments.of("invalidate of a pool", "pool p pd_a 64K\ninvalidate p buf 4K",
                "'p' is a pool; expected the name of a cache"),
            Arguments.of("close of a fragment", "pool p pd_a 64K\nalloc f p 4K\nclose f", "'f' is a fragment; expected"
                + " the name of "),
            Arguments.of("close of a handle", "cache c pd_a\nacquire h c buf 4K\nclose h", "'h' is a handle; expected"
                + " the name of "),
            Arguments.of("a buffer alone in an SGL", "post write qp_a sgl=buf remote=mr_dst",
                "SGE 'buf': expected ADDR:LEN or ADDR:LEN:LKEY (ADDR an MR or an address), or a fragment or handle "
                    + "name alone"),
            Arguments.of("a pool alone in an SGL", "pool p pd_a 64K\npost write qp_a sgl=p remote=mr_dst",
                "SGE 'p': expected ADDR:LEN"),
            Arguments.of("a pool field that is none", "pool p pd_a 64K\nexpect p.idle == 0",
                "'p.idle': a pool has the fields ["),
            Arguments.of("a cache field that is none", "cache c pd_a\nexpect c.fragments == 0",
                "'c.fragments': a cache has the fields ["),
            Arguments.of("a fragment field that is none", "pool p pd_a 64K\nalloc f p 4K\nexpect f.hit == 0",
                "'f.hit': a fragment has the fields [addr, length, lkey, rkey]"),
            Arguments.of("a handle field that is none", "cache c pd_a\nacquire h c buf 4K\nexpect h.page_size == 0",
                "'h.page_size': a handle has the fields [addr, hit, length, lkey, rkey]"),
            Arguments.of("show of an unknown view", "show pools pd_a", "'pools' is not one of"),
            Arguments.of("show pool without a name", "show pool", "show pool needs a name"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedUseShouldFailBeforeRunningWithFileAndLine(final String what, final String lines,
        final String expected)
    {
        final StringWriter out = new StringWriter();
        final ScriptRunner runner = new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL);
        final int line = NEXT + (int)lines.chars().filter(c -> c == '\n').count();

        assertThatThrownBy(() -> runner.run("bad.rsim", TWO_HOSTS + lines + "\n", Path.of(".")))
            .isInstanceOfSatisfying(ScriptException.class, e ->
            {
                assertThat(e.getMessage()).startsWith("bad.rsim:" + line + ": ").contains(expected);
                assertThat(e.line()).isEqualTo(line);
            });
        if (!what.startsWith("show pool without"))
        {
            assertThat(out.toString()).isEmpty();
        }
    }

    @Test
    void namesShouldBeReboundToTheSameKindInsideRepeatBlocks()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            pool p pd_a 64K
            cache c pd_a
            repeat 10
                alloc f p 4K
                post write qp_a sgl=f remote=mr_dst unsignaled
                free f
                acquire h c buf 4K
                post write qp_a sgl=h remote=mr_dst unsignaled
                release h
            end
            expect last.count == 10
            expect p.hits == 9
            expect c.hits == 9
            expect nic_a.sim_mr_registrations == 2
            expect nic_b.rx_write_requests == 20
            """);

        assertThat(r.out()).contains("repeat 10: 10 done");
    }

    // ------------------------------------------------------------------ catalogue scenarios

    private static String scenario(final String name)
    {
        final ScriptRun r = ok(Catalogue.entry(name).orElseThrow().script());
        return r.out();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"strategies", "cache-stale-mapping", "cache-exhausts-keys", "cache-access-miss"})
    void scenarioShouldRunWithEveryExpectHeldAndTheSameOutputTwice(final String name)
    {
        assertThat(scenario(name)).isEqualTo(scenario(name));
    }

    @Test
    void strategiesShouldOrderTheStrategiesAsTheModelPricesThemAndAgreeWithItsChart()
    {
        final String out = scenario("strategies");
        final long direct = ScriptRun.figure(out, "per_op_direct");
        final long once = ScriptRun.figure(out, "per_op_once");
        final long pool = ScriptRun.figure(out, "per_op_pool");
        final long cache = ScriptRun.figure(out, "per_op_cache");
        final long odp = ScriptRun.figure(out, "per_op_odp");

        assertThat(direct).isGreaterThan(3 * Math.max(Math.max(once, pool), Math.max(cache, odp)));
        assertThat(odp).isEqualTo(once);
        assertThat(ScriptRun.figure(out, "first_odp")).isLessThan(ScriptRun.figure(out, "first_once"))
            .isGreaterThan(ScriptRun.figure(out, "first_direct"));
        assertThat(ScriptRun.figure(out, "mtt_odp")).isEqualTo(256);
        assertThat(ScriptRun.figure(out, "pinned_odp")).isZero();
        // Per request on cold memory, the ODP fault costs about what a registration does: the pin faults the same
        // pages in (within 10 %).
        assertThat(ScriptRun.figure(out, "p2_odp_per_op") * 10).isGreaterThan(ScriptRun.figure(out,
            "p2_direct_per_op") * 9);
        assertThat(ScriptRun.figure(out, "p2_odp_pinned")).isZero();
        assertThat(ScriptRun.figure(out, "p3_odp_per_op")).isLessThan(ScriptRun.figure(out, "p3_cache_per_op"));
        assertThat(ScriptRun.figure(out, "p3_odp_mtt")).isEqualTo(768);
        assertThat(cache).isGreaterThan(pool);
        // The pool's first chunk is fresh memory, so its pin also faults the pages in: at least the up-front cost.
        assertThat(ScriptRun.figure(out, "first_pool")).isGreaterThanOrEqualTo(ScriptRun.figure(out, "first_once"));
        assertThat(ScriptRun.figure(out, "first_once")).isGreaterThan(ScriptRun.figure(out, "first_direct"));
        assertThat(ScriptRun.figure(out, "first_cache")).isEqualTo(ScriptRun.figure(out, "first_direct"));
        assertThat(ScriptRun.figure(out, "mtt_direct")).isEqualTo(16);
        assertThat(ScriptRun.figure(out, "mtt_pool")).isEqualTo(256);
        assertThat(ScriptRun.figure(out, "pinned_cache")).isEqualTo(1L << 20);
        assertThat(ScriptRun.figure(out, "p2_pool_breakeven")).isBetween(1L, 8L);
        assertThat(ScriptRun.figure(out, "p2_cache_per_op")).isEqualTo(ScriptRun.figure(out, "p2_direct_per_op"));
        assertThat(out).contains("hits 0, misses 200, evictions 184, invalidations 0");

        // The chart serves the same stream with the verbs API: its first and last points are the script's figures.
        final ChartData chart = Charts.strategyTimeData();
        final String[][] series = {{Charts.SERIES_PER_REQUEST, "direct"}, {Charts.SERIES_ONCE, "once"},
            {Charts.SERIES_POOL, "pool"}, {Charts.SERIES_CACHE, "cache"}, {Charts.SERIES_ODP, "odp"}};
        for (final String[] s : series)
        {
            final long first = ScriptRun.figure(out, "p1_" + s[1] + "_first");
            final long rest = ScriptRun.figure(out, "p1_" + s[1] + "_ns");
            assertThat(chart.yAt(s[0], 1)).as(s[0]).isEqualTo(first / 1000.0);
            assertThat(chart.yAt(s[0], 200)).as(s[0]).isCloseTo((first + rest) / 200.0 / 1000.0,
                org.assertj.core.data.Offset.offset(1e-9));
        }
    }

    @Test
    void cacheStaleMappingShouldReadTheOldBytesWithoutTheHookAndTheNewOnesWithIt()
    {
        final String out = scenario("cache-stale-mapping");

        assertThat(out).contains("expect bytes landing \"old contents\": held")
            .contains("expect bytes buf \"NEW contents\": held").contains("expect h.hit == 1: held")
            .contains("expect bytes landing \"NEW contents\": held").contains("pin count 0, map count 1");
        assertThat(out.indexOf("\"old contents\": held")).isLessThan(out.indexOf("== With the munmap hook =="));
    }

    @Test
    void cacheExhaustsKeysShouldFailNamingMaxMrAndTheIdleEntriesThenEvictWithABound()
    {
        final String out = scenario("cache-exhausts-keys");

        assertThat(out).contains("-> ENOMEM: repeat 32: 16 done, then ENOMEM in repetition 17: "
            + "acquire: ibv_reg_mr: MPT full: 16 entries live, every one of the 16 "
            + "usable indices (max_mr=16; index 0 is reserved)")
            .contains("the cache holds 16 idle MRs (1048576 bytes) that a bound on regions or bytes would have "
                + "released");
        assertThat(out).contains("hits 0, misses 32, evictions 24, invalidations 0");
    }

    @Test
    void cacheAccessMissShouldRegisterAgainAndThePeersWriteShouldSucceed()
    {
        final String out = scenario("cache-access-miss");

        assertThat(out).containsPattern("acquire h2: miss: registered MR 0x[0-9a-f]+\\+64 KiB lkey=0x[0-9a-f]{8} "
            + "rkey=0x[0-9a-f]{8} access \\[LOCAL_WRITE, REMOTE_WRITE\\]");
        assertThat(out).contains("expect bytes buf \"from the peer\": held").contains("IBV_WC_REM_ACCESS_ERR");
    }
}
