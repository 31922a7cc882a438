package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
 * GPU memory and relaxed ordering in scripts: {@code gpu}, {@code gpualloc}, {@code gpuwrite}, {@code gpufree},
 * {@code gpumove}, {@code memcpy}, {@code dmabuf}, {@code reg ... dmabuf=} and {@code reg} on a GPU address (peer
 * memory), {@code host ... peermem=}, {@code device ... dmabuf=}, {@code watch}, {@code write ADDR DATA SIZE}, the
 * GPU, buffer, dma-buf, watch, MR and device fields, malformed uses, and the catalogue scenarios built on them.
 */
class ScriptGpuTest
{
    /**
     * Lines 1 to 18: two connectx5 hosts, beta with a peer-memory client, a GPU each (ga, gb), connected QPs, and a
     * 64 KiB source MR on alpha holding "hello GPU".
     */
    private static final String GPU_HOSTS = """
        host alpha ram=256M
        host beta ram=256M peermem=yes
        device nic_a alpha profile=connectx5
        device nic_b beta profile=connectx5
        gpu ga alpha
        gpu gb beta
        open app_a nic_a
        open app_b nic_b
        pd pd_a app_a
        pd pd_b app_b
        cq cq_a app_a
        cq cq_b app_b
        qp qp_a pd_a cq_a
        qp qp_b pd_b cq_b
        connect qp_a qp_b
        mmap src app_a 64K
        write src "hello GPU"
        reg mr_src pd_a src 64K
        """;

    /** The line number of the first line after {@link #GPU_HOSTS}. */
    private static final int NEXT = 19;

    private static ScriptRun ok(final String text)
    {
        final ScriptRun r = ScriptRun.ok("gpu.rsim", text);
        assertThat(r.out()).doesNotContain("FAILED");
        return r;
    }


    // ------------------------------------------------------------------ gpu, gpualloc, gpuwrite, show gpu

    @Test
    void gpuShouldTakeVramBar1AndTopologyAndHandOutBuffersAtGpuAddresses()
    {
        final ScriptRun r = ok(GPU_HOSTS + """
            gpu g2 alpha vram=1G bar1=32M topology=sys
            expect g2.vram == 1G
            expect g2.bar1 == 32M
            expect g2.vram_used == 0
            gpualloc b g2 100K
            expect b.length == 128K
            expect g2.vram_used == 128K
            expect g2.buffers == 1
            expect b.vram_offset == 0
            expect b.freed == 0
            gpuwrite b+10 "in VRAM"
            expect bytes b+10 "in VRAM"
            gpuwrite b "ab" 6
            expect bytes b "ababab"
            show gpu g2
            gpufree b
            expect b.freed == 1
            expect g2.vram_used == 0
            """);

        assertThat(r.out()).contains("gpu g2: 1 GiB VRAM at bus 0x").contains("BAR1 aperture 32 MiB, PCIe path to "
            + "the NIC SYS (across the link between the sockets)")
            .containsPattern("gpualloc b: cudaMalloc: GPU VA 0x[0-9a-f]+, 128 KiB \\(VRAM offset 0x0\\); 128 KiB of "
                + "1 GiB VRAM in use")
            .contains("GPU g2 in host alpha: 1 GiB VRAM (128 KiB in use), BAR1 32 MiB (0 B mapped for peers)")
            .contains("cudaFree: 128 KiB of VRAM returned");
    }

    @Test
    void writeWithASizeShouldRepeatThePattern()
    {
        ok(GPU_HOSTS + """
            mmap m app_a 4K
            write m "xy" 5
            expect bytes m "xyxyx"
            expect bytes m+5 hex:00
            write m hex:ff 4K
            expect bytes m+4095 hex:ff
            """);
    }

    // ------------------------------------------------------------------ registration

    @Test
    void dmabufRegistrationShouldPinNothingMapBar1AndTakeTheGpuAddressAsIova()
    {
        final ScriptRun r = ok(GPU_HOSTS + """
            gpualloc v gb 1M
            dmabuf fd v 64K 128K
            expect fd.offset == 64K
            expect fd.length == 128K
            expect fd.closed == 0
            let pinned0 app_b.pinned_vm
            # 64 KiB from byte 68 KiB of the buffer: two 64 KiB GPU pages in BAR1.
            reg g pd_b 4K 64K dmabuf=fd access=lw,rw
            expect g.kind == DMABUF_DYNAMIC
            expect g.iova == v+64K+4K
            expect g.length == 64K
            expect g.bar1 == 128K
            expect gb.bar1_used == 128K
            expect g.pinned_pages == 0
            expect app_b.pinned_vm == pinned0
            expect g.mtt_entries == 16
            expect g.page_size == 4K
            post write qp_a sgl=mr_src:9 remote=g+100
            poll cq_a
            expect SUCCESS
            expect bytes v+68K+100 "hello GPU"
            expect bytes g+100 "hello GPU"
            show mr g
            dereg g
            expect gb.bar1_used == 0
            expect g.closed == 1
            close fd
            expect fd.closed == 1
            """);

        assertThat(r.out()).containsPattern("reg g: lkey=0x[0-9a-f]{8} rkey=0x[0-9a-f]{8} \\(index \\d+, variant \\d+\\);"
            + " DMABUF_DYNAMIC over gb memory \\(topology PIX\\): 16 MTT entries, 128 KiB of BAR1 mapped \\(128 KiB "
            + "of 256 MiB in use\\), no host page pinned")
            .contains("MR over GPU memory (DMABUF_DYNAMIC)").contains("MR over GPU memory (DMABUF_DYNAMIC) "
                + "deregistered: 128 KiB of BAR1 unmapped");
    }

    @Test
    void regOnAGpuAddressShouldNeedThePeerMemoryClient()
    {
        final ScriptRun r = ok(GPU_HOSTS + """
            gpualloc va ga 64K
            reg pa pd_a va 64K
            expect EFAULT
            expect ga.bar1_used == 0
            gpualloc vb gb 64K
            reg pb pd_b vb 64K access=lw,rw
            expect pb.kind == PEER_MEMORY
            expect pb.iova == vb
            expect gb.bar1_used == 64K
            post write qp_a sgl=mr_src:9 remote=pb
            poll cq_a
            expect SUCCESS
            expect bytes vb "hello GPU"
            """);

        assertThat(r.out()).contains("no peer-memory client (nvidia-peermem) is loaded")
            .contains("peer-memory client (nvidia-peermem) loaded").contains("PEER_MEMORY over gb memory");
    }

    @Test
    void dmabufArgumentsShouldFailAsIbvRegDmabufMrDoes()
    {
        final ScriptRun r = ok(GPU_HOSTS + """
            gpualloc v gb 64K
            dmabuf fd v
            reg x pd_b 0 64K dmabuf=fd access=lw,rw,mw_bind
            expect EINVAL
            reg x pd_b 0 64K dmabuf=fd access=lw,zb
            expect EINVAL
            reg x pd_b 0x10 4K dmabuf=fd iova=0x1000
            expect EINVAL
            reg x pd_b 0 128K dmabuf=fd
            expect EINVAL
            reg x pd_b 0 64K dmabuf=12345
            expect EBADF
            reg x pd_b 0 64K dmabuf=fd
            expect ok
            device nic_none beta dmabuf=none
            open app_n nic_none
            pd pd_n app_n
            reg y pd_n 0 64K dmabuf=fd
            expect EOPNOTSUPP
            """);

        assertThat(r.out()).contains("device nic_none: connectx5").contains(", no dma-buf MRs")
            .contains("EBADF: ibv_reg_dmabuf_mr: fd 12345 names no open dma-buf on host beta");
    }

    @Test
    void bar1ShouldRefuseARegistrationThatDoesNotFitWithEfaultNamingIt()
    {
        final ScriptRun r = ok(GPU_HOSTS + """
            gpu small beta bar1=1M
            gpualloc v small 2M
            reg x pd_b v 2M access=lw,rw
            expect EFAULT
            expect small.bar1_used == 0
            reg y pd_b v 1M access=lw,rw
            expect small.bar1_used == 1M
            """);

        assertThat(r.out()).contains("-> EFAULT: ibv_reg_mr: small: BAR1 aperture exhausted: 2097152 bytes "
            + "asked, 0 of 1048576 bytes mapped");
    }

    // ------------------------------------------------------------------ gpumove, gpufree

    @Test
    void moveShouldNotifyTheDynamicImporterAndTheNextAccessShouldFaultItBack()
    {
        final ScriptRun r = ok(GPU_HOSTS + """
            gpualloc v gb 64K
            dmabuf fd v
            reg g pd_b 0 64K dmabuf=fd access=lw,rw
            let at0 v.vram_offset
            let naks0 nic_b.sim_odp_rnr_naks
            gpumove v
            expect g.moves == 1
            expect g.bar1 == 0
            expect gb.bar1_used == 0
            expect v.vram_offset != at0
            post write qp_a sgl=mr_src:9 remote=g
            poll cq_a
            expect SUCCESS
            expect g.page_faults == 1
            expect g.bar1 == 64K
            expect nic_b.sim_odp_rnr_naks > naks0
            expect bytes v "hello GPU"
            """);

        assertThat(r.out()).containsPattern("moved in VRAM from offset 0x0 to 0x[0-9a-f]+; move_notify told 1 dynamic "
            + "importer\\(s\\) first");
    }

    @Test
    void pinnedDmabufAndPeerMemoryShouldHoldTheirBuffer()
    {
        ok(GPU_HOSTS + """
            device nic_p beta dmabuf=pinned
            open app_p nic_p
            pd pd_p app_p
            gpualloc v gb 64K
            dmabuf fd v
            reg p pd_p 0 64K dmabuf=fd access=lw,rw
            expect p.kind == DMABUF_PINNED
            gpumove v
            expect EBUSY
            dereg p
            gpumove v
            expect ok
            gpualloc w gb 64K
            reg q pd_b w 64K access=lw,rw
            gpumove w
            expect EBUSY
            dereg q
            gpumove w
            expect ok
            """);
    }

    @Test
    void cudaFreeUnderAPeerMemoryMrShouldRevokeItAndItsAccessesShouldFail()
    {
        final ScriptRun r = ok(GPU_HOSTS + """
            gpualloc v gb 64K
            reg pm pd_b v 64K access=lw,rw
            gpufree v
            expect pm.revoked == 1
            expect pm.bar1 == 0
            expect gb.bar1_used == 0
            post write qp_a sgl=mr_src:9 remote=pm
            poll cq_a
            expect REM_ACCESS_ERR
            show mr pm
            """);

        assertThat(r.out()).contains("the peer-memory client revoked 1 MR(s) first")
            .contains("(revoked by the peer-memory client: the buffer was freed; its keys no longer translate)");
    }

    @Test
    void expectBytesOfAFreedBufferShouldFailTheRunWithTheReason()
    {
        final ScriptRun r = ScriptRun.run("gpu.rsim", GPU_HOSTS + """
            gpualloc v gb 64K
            gpufree v
            expect bytes v "x"
            """);

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.out()).contains("FAILED: reading 1 bytes of GPU memory at 0x").contains("is not inside a live "
            + "buffer of gb");
    }

    // ------------------------------------------------------------------ memcpy

    @Test
    void memcpyShouldCopyBothWaysAndBePricedOnTheClock()
    {
        final ScriptRun r = ok(GPU_HOSTS + """
            gpualloc v ga 64K
            mmap h app_a 64K
            write h "host bytes"
            memcpy h2d v+4K h 10
            expect last.duration_ns >= 6500
            expect bytes v+4K "host bytes"
            gpuwrite v "gpu bytes"
            memcpy d2h h+100 v 9
            expect bytes h+100 "gpu bytes"
            let t0 now
            memcpy d2h h v 64K
            let copy_ns now-t0
            """);

        assertThat(ScriptRun.figure(r.out(), "copy_ns")).isGreaterThan(6500 + 9000);
        assertThat(r.out()).containsPattern("cudaMemcpy H2D 10 B from 0x[0-9a-f]+ to GPU VA 0x[0-9a-f]+ of ga: ");
    }

    // ------------------------------------------------------------------ P2P cost

    @Test
    void writeFromGpuToGpuShouldCostMoreAcrossTheSocketsThanBehindOneSwitch()
    {
        final ScriptRun r = ok(GPU_HOSTS + """
            gpu far_a alpha topology=SYS
            gpu far_b beta topology=SYS
            gpualloc na ga 1M
            gpualloc nb gb 1M
            gpualloc fa far_a 1M
            gpualloc fb far_b 1M
            reg mna pd_a na 1M
            expect EFAULT
            dmabuf fdna na
            reg mna pd_a 0 1M dmabuf=fdna
            reg mnb pd_b nb 1M access=lw,rw
            dmabuf fdfa fa
            reg mfa pd_a 0 1M dmabuf=fdfa
            reg mfb pd_b fb 1M access=lw,rw
            repeat 1
            post write qp_a sgl=mna:1M remote=mnb
            post write qp_a sgl=mfa:1M remote=mfb
            poll cq_a
            end
            let t0 now
            post write qp_a sgl=mna:1M remote=mnb
            let near_ns now-t0
            let t0 now
            post write qp_a sgl=mfa:1M remote=mfb
            let far_ns now-t0
            expect far_ns > near_ns
            poll cq_a
            """);

        // The slowest path (SYS) moves the payload at 478/1000 of the link rate.
        final long wire = (long)Math.ceil((1 << 20) * 8.0 / 100.0);
        final long extra = (long)Math.ceil(wire * 1000.0 / 478 - wire);
        assertThat(ScriptRun.figure(r.out(), "far_ns") - ScriptRun.figure(r.out(), "near_ns")).isBetween(extra - 2, extra + 2);
    }

    // ------------------------------------------------------------------ relaxed ordering and watch

    @Test
    void relaxedOrderingShouldBeAcceptedOnEveryDeviceAndTheDeviceFieldsShouldSayWhereItApplies()
    {
        ok("""
            host h ram=256M
            device cx3 h profile=connectx3
            device cx5 h profile=connectx5
            device forced h profile=connectx4-forced-ro
            device soft h profile=rxe
            expect cx3.relaxed_ordering == 0
            expect soft.relaxed_ordering == 0
            expect cx5.relaxed_ordering == 1
            expect forced.relaxed_ordering == 1
            open a3 cx3
            pd p3 a3
            mmap m a3 64K
            reg r3 p3 m 64K access=lw,rw,relaxed_ordering
            expect ok
            open ar soft
            pd pr ar
            mmap mr ar 64K
            reg rr pr mr 64K access=lw,rw,ro
            expect ok
            expect cx5.chunks_placed == 0
            expect cx5.chunks_reordered == 0
            expect cx5.write_overtakes == 0
            expect cx5.chunks_in_flight == 0
            """);
    }

    @Test
    void watchShouldSeeAStrictFlagOnlyAfterItsDataAndAWriteShouldStayInFlightUntilACompletion()
    {
        final ScriptRun r = ok(GPU_HOSTS + """
            write src "0123456789abcdef" 4K
            write src+4K hex:0100000000000000
            mmap dst app_b 12K
            reg data pd_b dst 8K access=lw,rw,ro
            reg flag pd_b dst+8K 4K access=lw,rw
            watch w nic_b flag=flag data=dst length=4K
            expect w.seen == 0
            expect w.torn == 0
            post write qp_a sgl=mr_src:4K remote=data unsignaled
            expect w.seen == 0
            let placed w.placements
            post write qp_a sgl=mr_src+4K:8 remote=flag
            expect w.seen == 1
            expect w.torn == 0
            expect w.placements == 17
            expect bytes dst "0123456789abcdef"
            expect nic_b.chunks_in_flight == 0
            expect nic_b.chunks_placed >= 17
            close w
            watch w2 nic_b flag=flag data=dst length=4K value=2
            post write qp_a sgl=mr_src+4K:8 remote=flag
            expect w2.seen == 0
            poll cq_a
            """);

        assertThat(r.out()).contains("watch w: a CPU of beta polls the 8-byte flag at 0x").contains("for 1 after every "
            + "chunk nic_b places, and reads 4 KiB at 0x").contains("stopped polling");
        assertThat(ScriptRun.figure(r.out(), "placed")).isBetween(8L, 16L);
    }

    @Test
    void forcedRelaxedOrderingShouldLetEvenAStrictFlagOvertakeItsData()
    {
        final ScriptRun r = ok("""
            host alpha ram=256M
            host delta ram=256M
            device nic_a alpha profile=connectx5
            device nic_d delta profile=connectx4-forced-ro
            open app_a nic_a
            open app_d nic_d
            pd pd_a app_a
            pd pd_d app_d
            cq cq_a app_a
            cq cq_d app_d
            qp qp_a pd_a cq_a
            qp qp_d pd_d cq_d
            connect qp_a qp_d
            mmap src app_a 8K
            write src "0123456789abcdef" 4K
            write src+4K hex:0100000000000000
            reg mr_src pd_a src 8K
            mmap dst app_d 12K
            reg data pd_d dst 8K access=lw,rw,ro
            reg flag pd_d dst+8K 4K access=lw,rw
            let torn 0
            repeat 8
            write dst hex:00 12K
            watch w nic_d flag=flag data=dst length=4K
            post write qp_a sgl=mr_src:4K remote=data unsignaled
            post write qp_a sgl=mr_src+4K:8 remote=flag
            poll cq_a
            let torn torn+w.torn
            end
            let torn_rounds torn
            """);

        assertThat(ScriptRun.figure(r.out(), "torn_rounds")).isPositive();
    }

    // ------------------------------------------------------------------ malformed scripts

    static Stream<Arguments> malformed()
    {
        return Stream.of(
            Arguments.of("reg with dmabuf= without SIZE", "reg g pd_b 0 dmabuf=3",
                "reg with dmabuf= is ibv_reg_dmabuf_mr: give OFFSET and SIZE"),
            Arguments.of("reg implicit with dmabuf=", "reg g pd_b implicit dmabuf=3 access=odp",
                "reg with dmabuf= is ibv_reg_dmabuf_mr: give OFFSET and SIZE"),
            Arguments.of("dmabuf with OFFSET but no SIZE", "gpualloc v gb 64K\ndmabuf fd v 0",
                "dmabuf takes OFFSET and SIZE together"),
            Arguments.of("dmabuf of a host buffer", "dmabuf fd src",
                "'src' is a buffer; expected the name of a GPU buffer"),
            Arguments.of("gpu with an unknown topology", "gpu g3 alpha topology=QPI",
                "'QPI' is not one of [node, phb, pix, pxb, sys]"),
            Arguments.of("gpu on a device", "gpu g3 nic_a", "'nic_a' is a device; expected the name of a host"),
            Arguments.of("a GPU name taken", "gpu ga beta", "hosts, devices and GPUs need names of their own"),
            Arguments.of("gpualloc on a host", "gpualloc v alpha 64K", "'alpha' is a host; expected the name of a GPU"),
            Arguments.of("gpualloc without a size", "gpualloc v ga",
                "expected: " + Spec.VERBS.get("gpualloc").usage()),
            Arguments.of("gpufree of a host buffer", "gpufree src",
                "'src' is a buffer; expected the name of a GPU buffer"),
            Arguments.of("gpumove of an MR", "gpumove mr_src", "'mr_src' is an MR; expected the name of a GPU buffer"),
            Arguments.of("gpuwrite without data", "gpualloc v ga 64K\ngpuwrite v",
                "expected: " + Spec.VERBS.get("gpuwrite").usage()),
            Arguments.of("gpuwrite with bad data", "gpualloc v ga 64K\ngpuwrite v hex:123",
                "expected data: a \"quoted string\" or hex:BYTES"),
            Arguments.of("memcpy in an unknown direction", "gpualloc v ga 64K\nmemcpy d2d src v 4K",
                "'d2d' is not one of [d2h, h2d]"),
            Arguments.of("memcpy without a size", "gpualloc v ga 64K\nmemcpy d2h src v",
                "expected: " + Spec.VERBS.get("memcpy").usage()),
            Arguments.of("watch without flag=", "watch w nic_b data=src length=4K", "watch needs flag="),
            Arguments.of("watch without length=", "watch w nic_b flag=src data=src", "watch needs length="),
            Arguments.of("watch on a host", "watch w beta flag=src data=src length=8",
                "'beta' is a host; expected the name of a device"),
            Arguments.of("a GPU field that is none", "expect ga.memory == 0", "'ga.memory': a GPU has the fields ["),
            Arguments.of("a watch field that is none", "watch w nic_a flag=src data=src length=8\nexpect w.flag == 1",
                "'w.flag': a watch has the fields [placements, seen, torn]"),
            Arguments.of("a dma-buf field that is none", "gpualloc v ga 64K\ndmabuf fd v\nexpect fd.size == 0",
                "'fd.size': a dma-buf has the fields [closed, fd, length, offset]"),
            Arguments.of("device with an unknown dma-buf mode", "device nic_x alpha dmabuf=maybe",
                "'maybe' is not one of [dynamic, none, pinned]"),
            Arguments.of("host with a bad peermem", "host gamma peermem=on", "'on' is not one of [no, yes]"),
            Arguments.of("close of a GPU", "close ga", "'ga' is a GPU; expected the name of "),
            Arguments.of("show gpu without a name", "show gpu", "show gpu needs a name"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedUseShouldFailBeforeRunningWithFileAndLine(final String what, final String lines,
        final String expected)
    {
        final StringWriter out = new StringWriter();
        final ScriptRunner runner = new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL);
        final int line = NEXT + (int)lines.chars().filter(c -> c == '\n').count();

        assertThatThrownBy(() -> runner.run("bad.rsim", GPU_HOSTS + lines + "\n", Path.of(".")))
            .isInstanceOfSatisfying(ScriptException.class, e ->
            {
                assertThat(e.getMessage()).startsWith("bad.rsim:" + line + ": ").contains(expected);
                assertThat(e.line()).isEqualTo(line);
            });
        assertThat(out.toString()).as("nothing runs before the whole script is checked").isEmpty();
    }

    static Stream<Arguments> misused()
    {
        return Stream.of(
            Arguments.of("gpuwrite to host memory", "gpuwrite src \"x\"", "'src' is no GPU address: start it with a "
                + "GPU buffer's name (gpualloc) or an MR over GPU memory"),
            Arguments.of("write to GPU memory", "gpualloc v ga 64K\nwrite v \"x\"", "(it is GPU memory: gpuwrite "
                + "stores there, memcpy copies)"),
            Arguments.of("memcpy d2h from host memory", "gpualloc v ga 64K\nmemcpy d2h v src 4K",
                "'v' is no host address (DST of d2h)"),
            Arguments.of("memcpy h2d to host memory", "memcpy h2d src src 4K", "'src' is no GPU address (DST of h2d)"),
            Arguments.of("memcpy of nothing", "gpualloc v ga 64K\nmemcpy h2d v src 0", "SIZE '0' is 0; give 1 byte"),
            Arguments.of("a dma-buf of another host", "gpualloc v ga 64K\ndmabuf fd v\nreg g pd_b 0 64K dmabuf=fd",
                "dma-buf 'fd' was exported on host alpha, and PD pd_b is on host beta"),
            Arguments.of("watch of another host's memory", "watch w nic_b flag=src data=src length=8",
                "watch: the flag is in host alpha, and device nic_b writes into host beta"),
            Arguments.of("watch of GPU memory", "gpualloc v ga 64K\nwatch w nic_a flag=v data=v length=8",
                "watch: flag= and data= must be host addresses of one process"),
            Arguments.of("a GPU without a value", "let x ga", "a GPU has no value of its own"),
            Arguments.of("show odp of a GPU MR", "gpualloc v gb 64K\nreg g pd_b v 64K\nshow odp g",
                "'g' is an MR over GPU memory, not an on-demand-paging one; show mr g shows it"),
            Arguments.of("rereg of a GPU MR is refused", "gpualloc v gb 64K\nreg g pd_b v 64K\nrereg g size=4K\n"
                + "expect EOPNOTSUPP\nshow walk v", "show walk needs an address in a process"),
            Arguments.of("write with an empty size", "write src \"x\" 0", "SIZE 0: give 1 byte to 1 GiB"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("misused")
    void misusedValueShouldStopTheRunAtItsLine(final String what, final String lines, final String expected)
    {
        final ScriptRunner runner = new ScriptRunner(new PrintWriter(new StringWriter(), true),
            ScriptRunner.Detail.FULL);
        final int line = NEXT + (int)lines.chars().filter(c -> c == '\n').count();

        assertThatThrownBy(() -> runner.run("use.rsim", GPU_HOSTS + lines + "\n", Path.of(".")))
            .isInstanceOfSatisfying(ScriptException.class, e ->
            {
                assertThat(e.getMessage()).startsWith("use.rsim:" + line + ": ").contains(expected);
                assertThat(e.line()).isEqualTo(line);
            });
    }

    // ------------------------------------------------------------------ catalogue scenarios

    private static String scenario(final String name)
    {
        return ok(Catalogue.entry(name).orElseThrow().script()).out();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"gpudirect-p2p", "gpu-memory-rules", "relaxed-ordering"})
    void scenarioShouldRunWithEveryExpectHeldAndTheSameOutputTwice(final String name)
    {
        assertThat(scenario(name)).isEqualTo(scenario(name)).doesNotContain("FAILED");
    }

    @Test
    void gpudirectP2pShouldBeatTheBounceBehindOneSwitchAndLoseToPipelinedStagingAcrossTheSockets()
    {
        final String out = scenario("gpudirect-p2p");

        assertThat(ScriptRun.figure(out, "near_p2p_4k_ns")).isLessThan(ScriptRun.figure(out, "bounce_4k_ns"));
        assertThat(ScriptRun.figure(out, "near_p2p_8m_ns")).isLessThan(ScriptRun.figure(out, "far_p2p_8m_ns"));
        assertThat(ScriptRun.figure(out, "far_p2p_8m_ns")).isLessThan(ScriptRun.figure(out, "bounce_8m_ns"));
        final long staged = ScriptRun.figure(out, "d2h_1m_ns") + ScriptRun.figure(out, "wire_1m_ns") + ScriptRun.figure(out, "h2d_1m_ns")
            + 15 * ScriptRun.figure(out, "d2h_1m_ns");
        assertThat(ScriptRun.figure(out, "staged_16m_ns")).isEqualTo(staged);
        assertThat(ScriptRun.figure(out, "far_p2p_16m_ns")).isGreaterThan(staged);
        assertThat(ScriptRun.figure(out, "near_p2p_16m_ns")).isLessThan(staged);
        assertThat(ScriptRun.figure(out, "near_8m_lower_pct")).isEqualTo(100 - ScriptRun.figure(out, "near_p2p_8m_ns") * 100
            / ScriptRun.figure(out, "bounce_8m_ns"));
        assertThat(out).contains("DMABUF_DYNAMIC over near_b memory").contains("PEER_MEMORY over far_b memory");
    }

    @Test
    void gpuMemoryRulesShouldShowEveryRefusalWithItsErrno()
    {
        final String out = scenario("gpu-memory-rules");

        assertThat(out).contains("no peer-memory client (nvidia-peermem) is loaded")
            .contains("access MW_BIND: only LOCAL_WRITE").contains("differ in their offset within a 4 KiB page")
            .contains("EBADF: ibv_reg_dmabuf_mr: fd 99").contains("e810 (irdma) cannot register dma-bufs")
            .contains("BAR1 aperture exhausted").contains("is pinned by 1 importer(s) (dma_buf_pin)")
            .contains("pinned by 1 peer-memory MR(s) (nvidia_p2p_get_pages)").contains("IBV_WC_REM_ACCESS_ERR")
            .contains("expect bytes landing \"fd closed, MR alive\": held")
            .contains("expect bytes vram_b+100 \"into VRAM\": held");
    }

    @Test
    void relaxedOrderingShouldTearOnlyWhereOrderIsGivenUp()
    {
        final String out = scenario("relaxed-ordering");

        assertThat(ScriptRun.figure(out, "cx3_relaxed_ns")).isEqualTo(ScriptRun.figure(out, "cx3_strict_ns"));
        assertThat(ScriptRun.figure(out, "rxe_relaxed_ns")).isEqualTo(ScriptRun.figure(out, "rxe_strict_ns"));
        assertThat(ScriptRun.figure(out, "cx5_relaxed_ns")).isLessThan(ScriptRun.figure(out, "cx5_strict_ns"));
        assertThat(ScriptRun.figure(out, "cx5_saved_permille")).isBetween(50L, 100L);
        assertThat(ScriptRun.figure(out, "torn_with_strict_flag")).isZero();
        assertThat(ScriptRun.figure(out, "torn_with_relaxed_flag")).isPositive();
        assertThat(ScriptRun.figure(out, "torn_forced_strict_flag")).isPositive();
        assertThat(ScriptRun.figure(out, "torn_after_completion")).isZero();
        assertThat(ScriptRun.figure(out, "chunks_left_in_flight")).isPositive();
    }
}
