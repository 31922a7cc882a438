package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.OdpCaps;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The conversions between verbs-api values and the C structs, checked against C itself, since no device runs them
 * here: a C program fills {@code struct ibv_device_attr_ex} and {@code struct ibv_wc} with designated initialisers
 * (GUIDs with {@code htobe64}, immediate data with {@code htobe32}, values with the high bit set) and prints their
 * bytes, which the Java readers must turn into the expected values; and the Java writers fill
 * {@code struct ibv_send_wr}, {@code ibv_recv_wr} and {@code ibv_sge} arrays whose bytes a C program reads back
 * member by member. Skipped, with the reason, without gcc or the libibverbs headers.
 */
class StructRoundTripTest
{
    @TempDir
    Path dir;

    private static final String HEADERS = "#define _GNU_SOURCE\n#include <endian.h>\n#include <stdio.h>\n"
        + "#include <stdlib.h>\n#include <string.h>\n#include <infiniband/verbs.h>\n";

    private static MemorySegment hexToSegment(final Arena arena, final String hex)
    {
        final byte[] bytes = HexFormat.of().parseHex(hex.strip());
        final MemorySegment s = arena.allocate(bytes.length, 8);
        MemorySegment.copy(bytes, 0, s, JAVA_BYTE, 0, bytes.length);
        return s;
    }

    private static String dumpProgram(final String declarations)
    {
        return HEADERS + "static void dump(const void *p, size_t n) { const unsigned char *b = p; "
            + "for (size_t i = 0; i < n; i++) printf(\"%02x\", b[i]); }\nint main(void)\n{\n" + declarations
            + "    return 0;\n}\n";
    }

    @Test
    void shouldReadDeviceAttributesFilledByC() throws Exception
    {
        final CProgram c = CProgram.orSkip(dir);
        final String program = dumpProgram("""
                struct ibv_device_attr_ex a;
                memset(&a, 0, sizeof a);
                strcpy(a.orig_attr.fw_ver, "16.35.2000");
                a.orig_attr.node_guid = htobe64(0x0002c90300a1b2c3ULL);
                a.orig_attr.sys_image_guid = htobe64(0x0002c90300a1b2c4ULL);
                a.orig_attr.max_mr_size = 0xffffffffffffffffULL;
                a.orig_attr.page_size_cap = 0xfffffffffffff000ULL;
                a.orig_attr.vendor_id = 0x02c9;
                a.orig_attr.vendor_part_id = 4119;
                a.orig_attr.hw_ver = 0x10;
                a.orig_attr.max_qp = 131072;
                a.orig_attr.max_qp_wr = 32768;
                a.orig_attr.device_cap_flags = 0xed721c36u;
                a.orig_attr.max_sge = 30;
                a.orig_attr.max_sge_rd = 29;
                a.orig_attr.max_cq = 16777216;
                a.orig_attr.max_cqe = 4194303;
                a.orig_attr.max_mr = 16777215;
                a.orig_attr.max_pd = 8388608;
                a.orig_attr.max_qp_rd_atom = 16;
                a.orig_attr.max_ee_rd_atom = 99;
                a.orig_attr.max_res_rd_atom = 2097152;
                a.orig_attr.max_qp_init_rd_atom = 15;
                a.orig_attr.atomic_cap = IBV_ATOMIC_GLOB;
                a.orig_attr.max_mw = 4194304;
                a.orig_attr.max_srq = 8388607;
                a.orig_attr.max_srq_wr = 32767;
                a.orig_attr.max_srq_sge = 31;
                a.orig_attr.max_mcast_grp = 2097152;
                a.orig_attr.max_mcast_qp_attach = 240;
                a.orig_attr.max_total_mcast_qp_attach = 503316480;
                a.orig_attr.max_ah = 2147483647;
                a.orig_attr.max_pkeys = 65535;
                a.orig_attr.local_ca_ack_delay = 16;
                a.orig_attr.phys_port_cnt = 200;
                a.odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
                a.odp_caps.per_transport_caps.rc_odp_caps = 0x3f;
                a.odp_caps.per_transport_caps.uc_odp_caps = 0x1;
                a.odp_caps.per_transport_caps.ud_odp_caps = 0x3;
                a.xrc_odp_caps = 0x2f;
                dump(&a, sizeof a);
            """);
        assertThat(c.compile("attr", program).exit()).isZero();
        final CProgram.Run run = c.execute("attr");
        assertThat(run.exit()).isZero();

        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment a = hexToSegment(arena, run.output());
            assertThat(a.byteSize()).isEqualTo(IbvStructs.IBV_DEVICE_ATTR_EX.byteSize());

            assertThat(AttributesReader.read(a)).isEqualTo(DeviceAttributes.builder().fwVer("16.35.2000")
                .nodeGuid(0x0002c90300a1b2c3L).sysImageGuid(0x0002c90300a1b2c4L).maxMrSizeBytes(-1L)
                .pageSizeCap(0xfffffffffffff000L).vendorId(0x02c9).vendorPartId(4119).hwVer(0x10).maxQp(131072)
                .maxQpWr(32768).deviceCapFlags(0xed721c36L).maxSge(30).maxSgeRd(29).maxCq(16777216).maxCqe(4194303)
                .maxMr(16777215).maxPd(8388608).maxQpRdAtom(16).maxResRdAtom(2097152).maxQpInitRdAtom(15)
                .atomicCap(AtomicCap.GLOB).maxMw(4194304).maxSrq(8388607).maxSrqWr(32767).maxSrqSge(31).maxPkeys(65535)
                .maxMcastGrp(2097152).maxMcastQpAttach(240).maxTotalMcastQpAttach(503316480).maxAh(Integer.MAX_VALUE)
                .localCaAckDelay(16).physPortCnt(200).odpCaps(new OdpCaps(3, 0x3f, 0x1, 0x3, 0x2f)).build());
        }
    }

    @Test
    void shouldReadWorkCompletionsFilledByC() throws Exception
    {
        final CProgram c = CProgram.orSkip(dir);
        final String program = dumpProgram("""
                struct ibv_wc wc[3];
                memset(wc, 0, sizeof wc);
                wc[0].wr_id = 0x1122334455667788ULL;
                wc[0].status = IBV_WC_SUCCESS;
                wc[0].opcode = IBV_WC_RECV_RDMA_WITH_IMM;
                wc[0].byte_len = 0xfffffff0u;
                wc[0].imm_data = htobe32(0x12345678);
                wc[0].qp_num = 0xabcdef;
                wc[0].wc_flags = IBV_WC_WITH_IMM | IBV_WC_GRH;
                wc[0].src_qp = 0x345678;
                wc[0].slid = 0x1234;
                wc[0].sl = 5;
                wc[0].pkey_index = 3;
                wc[0].dlid_path_bits = 2;
                wc[1].wr_id = 7;
                wc[1].status = IBV_WC_REM_ACCESS_ERR;
                wc[1].opcode = 0x77;
                wc[1].vendor_err = 0x88;
                wc[1].qp_num = 0x12;
                wc[2].wr_id = 8;
                wc[2].status = IBV_WC_SUCCESS;
                wc[2].opcode = IBV_WC_RECV;
                wc[2].byte_len = 64;
                wc[2].invalidated_rkey = 0xdeadbeefu;
                wc[2].wc_flags = IBV_WC_WITH_INV;
                dump(wc, sizeof wc);
            """);
        assertThat(c.compile("wc", program).exit()).isZero();
        final CProgram.Run run = c.execute("wc");
        assertThat(run.exit()).isZero();

        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment wcs = hexToSegment(arena, run.output());
            final long size = WrStructs.IBV_WC.byteSize();
            assertThat(wcs.byteSize()).isEqualTo(3 * size);

            assertThat(RdmaCq.read(wcs.asSlice(0, size))).isEqualTo(new WorkCompletion(0x1122334455667788L,
                WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, 0xabcdef, 0xfffffff0L, true, 0x12345678, false, 0, 0)
                .withDatagram(0x345678, true, 0x1234, 5, 3, 2));
            assertThat(RdmaCq.read(wcs.asSlice(size, size))).as("a failed completion: opcode undefined")
                .isEqualTo(new WorkCompletion(7, WcStatus.REM_ACCESS_ERR, WcOpcode.SEND, 0x12, 0, false, 0, false, 0,
                    0x88));
            assertThat(RdmaCq.read(wcs.asSlice(2 * size, size))).isEqualTo(new WorkCompletion(8, WcStatus.SUCCESS,
                WcOpcode.RECV, 0, 64, false, 0, true, 0xdeadbeef, 0));
        }
    }

    @Test
    void shouldRefuseFlushAndAtomicWriteWhichOnlyTheExtendedQpBuildersPost()
    {
        // ibv_wr_post(3): FLUSH and ATOMIC_WRITE are posted by ibv_wr_flush / ibv_wr_atomic_write on a QP created with
        // ibv_create_qp_ex; this binding posts through ibv_post_send, so it refuses them (EOPNOTSUPP) before writing.
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment w = arena.allocate(WrStructs.IBV_SEND_WR);
            assertThat(WorkRequests.writeSend(w, SendWr.flush(1, 0x1000, 7, 64, dev.rnicsim.verbs.FlushPlacement.GLOBAL,
                dev.rnicsim.verbs.FlushSelectivity.RANGE), MemorySegment.NULL, null)).startsWith("EOPNOTSUPP FLUSH")
                .contains("ibv_create_qp_ex");
            assertThat(WorkRequests.writeSend(w, SendWr.atomicWrite(2, 0x1000, 7, 1), MemorySegment.NULL, null))
                .startsWith("EOPNOTSUPP ATOMIC_WRITE");
        }
    }

    @Test
    void shouldWriteWorkRequestsThatCReadsBack() throws Exception
    {
        final CProgram c = CProgram.orSkip(dir);
        final long wrBytes = WrStructs.IBV_SEND_WR.byteSize();
        final long sgeBytes = WrStructs.IBV_SGE.byteSize();
        final long recvBytes = WrStructs.IBV_RECV_WR.byteSize();
        final List<SendWr> wrs = List.of(
            new SendWr(0x0102030405060708L, WrOpcode.RDMA_WRITE_WITH_IMM, List.of(new Sge(0x7f0000001000L, 4096,
                0x11), new Sge(0x7f0000003000L, 0xffffffffL, 0x22)), EnumSet.of(SendFlag.SIGNALED, SendFlag.FENCE),
                0x7e0000000040L, 0xabcdef01, 0x12345678, 0, 0, 0),
            SendWr.compareAndSwap(2, new Sge(0x7f0000005000L, 8, 0x33), 0x7e0000000080L, 0x55, 0x0102030405060708L,
                0x1112131415161718L),
            SendWr.sendWithInv(3, List.of(), 0xfeedf00d));
        final RecvWr recv = RecvWr.of(9, new Sge(0x7f0000009000L, 100, 0x44));
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment sendArray = arena.allocate(WrStructs.IBV_SEND_WR, wrs.size());
            final MemorySegment sges = arena.allocate(WrStructs.IBV_SGE, 3);
            int sgeAt = 0;
            for (int i = 0; i < wrs.size(); i++)
            {
                final SendWr wr = wrs.get(i);
                assertThat(WorkRequests.writeSend(sendArray.asSlice(i * wrBytes, wrBytes), wr,
                    sges.asSlice(sgeAt * sgeBytes, wr.sgList().size() * sgeBytes), null)).isNull();
                sgeAt += wr.sgList().size();
            }
            final MemorySegment recvWr = arena.allocate(WrStructs.IBV_RECV_WR);
            final MemorySegment recvSge = arena.allocate(WrStructs.IBV_SGE);
            WorkRequests.writeRecv(recvWr, recv, recvSge);
            Files.writeString(dir.resolve("wrs.hex"), HexFormat.of().formatHex(sendArray.toArray(JAVA_BYTE)) + "\n"
                + HexFormat.of().formatHex(sges.toArray(JAVA_BYTE)) + "\n" + HexFormat.of().formatHex(
                    recvWr.toArray(JAVA_BYTE)) + "\n", StandardCharsets.US_ASCII);
            assertThat(sendArray.get(java.lang.foreign.ValueLayout.ADDRESS, WrStructs.SEND_WR_SG_LIST).address())
                .isEqualTo(sges.address());
            assertThat(recvWr.get(java.lang.foreign.ValueLayout.ADDRESS, WrStructs.RECV_WR_SG_LIST).address())
                .isEqualTo(recvSge.address());
        }
        final String program = HEADERS + """
            static void load(FILE *f, void *p, size_t n)
            {
                unsigned char *b = p;
                for (size_t i = 0; i < n; i++) { unsigned v; if (fscanf(f, "%2x", &v) != 1) exit(2); b[i] = v; }
            }
            int main(void)
            {
                struct ibv_send_wr w[3]; struct ibv_sge s[3]; struct ibv_recv_wr r;
                FILE *f = fopen("wrs.hex", "r");
                if (!f) return 3;
                load(f, w, sizeof w); load(f, s, sizeof s); load(f, &r, sizeof r);
                for (int i = 0; i < 3; i++)
                    printf("wr %d id=%llx opcode=%d flags=%u num_sge=%d\\n", i, (unsigned long long)w[i].wr_id,
                           w[i].opcode, w[i].send_flags, w[i].num_sge);
                printf("write imm=%x addr=%llx rkey=%x\\n", be32toh(w[0].imm_data),
                       (unsigned long long)w[0].wr.rdma.remote_addr, w[0].wr.rdma.rkey);
                printf("cas addr=%llx compare=%llx swap=%llx rkey=%x\\n",
                       (unsigned long long)w[1].wr.atomic.remote_addr, (unsigned long long)w[1].wr.atomic.compare_add,
                       (unsigned long long)w[1].wr.atomic.swap, w[1].wr.atomic.rkey);
                printf("inv rkey=%x\\n", w[2].invalidate_rkey);
                for (int i = 0; i < 3; i++)
                    printf("sge %d addr=%llx length=%u lkey=%x\\n", i, (unsigned long long)s[i].addr, s[i].length,
                           s[i].lkey);
                printf("recv id=%llx num_sge=%d next=%p\\n", (unsigned long long)r.wr_id, r.num_sge, (void *)r.next);
                return 0;
            }
            """;
        assertThat(c.compile("wrs", program).exit()).isZero();
        final CProgram.Run run = c.execute("wrs");
        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output().lines().toList()).containsExactly(
            "wr 0 id=102030405060708 opcode=1 flags=3 num_sge=2",
            "wr 1 id=2 opcode=5 flags=2 num_sge=1",
            "wr 2 id=3 opcode=9 flags=2 num_sge=0",
            "write imm=12345678 addr=7e0000000040 rkey=abcdef01",
            "cas addr=7e0000000080 compare=102030405060708 swap=1112131415161718 rkey=55",
            "inv rkey=feedf00d",
            "sge 0 addr=7f0000001000 length=4096 lkey=11",
            "sge 1 addr=7f0000003000 length=4294967295 lkey=22",
            "sge 2 addr=7f0000005000 length=8 lkey=33",
            "recv id=9 num_sge=1 next=(nil)");
    }
}
