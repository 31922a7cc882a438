package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.KeyRig.PAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.simnic.KeyRig.Footprint;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MrInitAttr;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * ibv_alloc_null_mr and ibv_reg_mr_ex: what each does, and that each failed call leaves the device as it was.
 */
class NewVerbsTest
{
    private static VerbsException refused(final Runnable call)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, call::run);
        assertThat(e).as("the call fails").isNotNull();
        return e;
    }

    // ------------------------------------------------------------------ ibv_alloc_null_mr

    @Test
    void shouldReadZerosFromANullMrAndDiscardWritesIntoIt()
    {
        // ibv_alloc_null_mr(3): writes to the MR are discarded and reads return zeros; lkey only.
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion nullA = k.rig.pdA.allocNullMr();
        final long dst = k.rig.bufferB(2 * PAGE);
        k.rig.processB().write(dst, RuleRig.pattern((int)(2 * PAGE), 3));
        final MemoryRegion dstMr = k.rig.pdB.regMr(dst, 2 * PAGE, RuleRig.REMOTE_ALL);

        assertThat(nullA.rkey()).isZero();
        assertThat(nullA.lengthBytes()).as("SIZE_MAX").isEqualTo(-1L);
        // A WRITE gathered from the null MR puts zeros on the wire, 6000 bytes from an arbitrary address.
        assertThat(k.post(k.rig.qpA, SendWr.write(1, List.of(new Sge(0x1234_5000L, 6000, nullA.lkey())), dst,
            dstMr.rkey())).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.rig.processB().read(dst, 6000)).isEqualTo(new byte[6000]);
        // A READ scattered into the null MR completes and lands nowhere; a later gather still reads zeros.
        k.rig.processB().write(dst, RuleRig.pattern(64, 5));
        assertThat(k.post(k.rig.qpA, SendWr.read(2, List.of(new Sge(0, 64, nullA.lkey())), dst, dstMr.rkey()))
            .status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.post(k.rig.qpA, SendWr.write(3, List.of(new Sge(0, 64, nullA.lkey())), dst + PAGE,
            dstMr.rkey())).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.rig.processB().read(dst + PAGE, 64)).isEqualTo(new byte[64]);
    }

    @Test
    void shouldDiscardASendReceivedIntoANullMr()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion nullB = k.rig.pdB.allocNullMr();
        k.rig.qpB.postRecv(RecvWr.of(7, new Sge(0, 256, nullB.lkey())));

        k.rig.processA().write(k.scratch, RuleRig.pattern(100, 9));
        k.rig.qpA.postSend(SendWr.send(8, List.of(RuleRig.sge(k.scratchMr, k.scratch, 100))));
        final List<dev.rnicsim.verbs.WorkCompletion> all = k.drain();

        assertThat(KeyRig.only(all, k.rig.qpA, 8).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(KeyRig.only(all, k.rig.qpB, 7).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(KeyRig.only(all, k.rig.qpB, 7).byteLen()).isEqualTo(100L);
    }

    @Test
    void shouldFailWithEopnotsuppForANullMrOnAProviderWithoutOneAndChangeNothing()
    {
        // libibverbs ibv_alloc_null_mr: a provider without alloc_null_mr (rxe, mlx4, irdma) gives EOPNOTSUPP.
        final KeyRig k = KeyRig.of(DeviceProfiles.rxe());
        final Footprint before = k.footprintB();

        assertThat(refused(() -> k.rig.pdB.allocNullMr()).errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(k.footprintB()).isEqualTo(before);
        final var spare = k.rig.ctxB.allocPd();
        assertThat(refused(spare::allocNullMr).errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        spare.dealloc();
    }

    @Test
    void shouldRefuseToReregOrBindANullMrAndKeepThePdBusyWhileItLives()
    {
        // libibverbs ibv_rereg_mr: not a plain MR is IBV_REREG_MR_ERR_INPUT/EINVAL; mlx5_bind_mw: ENOTSUP.
        final KeyRig k = KeyRig.connectx5();
        final var pd = k.rig.ctxB.allocPd();
        final MemoryRegion nullMr = pd.allocNullMr();
        final MemoryWindow mw = pd.allocMw(MwType.TYPE_1);
        final var qp = pd.createQp(dev.rnicsim.verbs.QpInitAttr.rc(k.rig.cqB));

        final ReregException rereg = catchThrowableOfType(ReregException.class, () -> nullMr.rereg(
            EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0, RuleRig.LOCAL));
        assertThat(rereg.reregError()).isEqualTo(ReregException.ERR_INPUT);
        assertThat(rereg.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> qp.bindMw(mw, 1, KeyRig.SIGNALED, new MwBindInfo(nullMr, 0, PAGE,
            EnumSet.of(Access.REMOTE_READ)))).errnoName()).isEqualTo(Errno.EOPNOTSUPP);

        mw.close();
        qp.close();
        assertThat(refused(pd::dealloc).errnoName()).isEqualTo(Errno.EBUSY);
        nullMr.close();
        pd.dealloc();
        assertThat(pd.isClosed()).isTrue();
    }

    // ------------------------------------------------------------------ ibv_query_port, ibv_query_gid

    @Test
    void shouldReportPortOneAndItsGidAndRefuseOtherPortsAndEmptyEntries()
    {
        // rxe_param.h: RXE_PORT_GID_TBL_LEN 1024, RXE_PORT_MAX_MSG_SZ 2^31; ib_query_port: a port outside
        // 1..phys_port_cnt is EINVAL; ibv_query_gid_ex: an empty entry is ENODATA.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        final dev.rnicsim.verbs.PortAttributes p = rig.ctxB.queryPort(1);

        assertThat(p.state()).isEqualTo(dev.rnicsim.verbs.PortAttributes.STATE_ACTIVE);
        assertThat(p.gidTblLen()).isEqualTo(1024);
        assertThat(p.maxMsgSzBytes()).isEqualTo(1L << 31);
        assertThat(p.linkLayer()).isEqualTo(dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET);
        assertThat(refused(() -> rig.ctxB.queryPort(0)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> rig.ctxB.queryPort(2)).errnoName()).isEqualTo(Errno.EINVAL);
        final byte[] gid = rig.ctxB.queryGid(1, 0);
        assertThat(gid).hasSize(16);
        assertThat(gid[0]).isEqualTo((byte)0xfe);
        assertThat(gid[1]).isEqualTo((byte)0x80);
        assertThat(refused(() -> rig.ctxB.queryGid(1, 1)).errnoName()).isEqualTo(Errno.ENODATA);
        assertThat(refused(() -> rig.ctxB.queryGid(1, 1024)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> rig.ctxB.queryGid(2, 0)).errnoName()).isEqualTo(Errno.EINVAL);
    }

    // ------------------------------------------------------------------ device memory

    @Test
    void shouldCopyToAndFromDeviceMemoryAndReachItThroughAZeroBasedMr()
    {
        // ibv_alloc_dm(3): memcpy to and from device memory; ibv_reg_dm_mr gives a zero-based MR over it.
        final KeyRig k = KeyRig.connectx5();
        final dev.rnicsim.verbs.DeviceMemory dm = k.rig.ctxB.allocDm(8192);
        dm.memcpyTo(100, RuleRig.pattern(52, 2));
        assertThat(dm.memcpyFrom(100, 52)).isEqualTo(RuleRig.pattern(52, 2));

        final MemoryRegion mr = k.rig.pdB.regDmMr(dm, 4096, 4096, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE, Access.REMOTE_READ, Access.ZERO_BASED));
        assertThat(k.write(k.rig.qpA, 16, mr.rkey(), 64, 6)).isEqualTo(WcStatus.SUCCESS);
        assertThat(dm.memcpyFrom(4096 + 16, 64)).isEqualTo(RuleRig.pattern(64, 6));
        assertThat(k.read(k.rig.qpA, 0, mr.rkey(), 16)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.scratchBytes(16)).isEqualTo(dm.memcpyFrom(4096, 16));
        assertThat(MrTypes.isPlain(mr)).isFalse();
    }

    @Test
    void shouldRefuseBadDeviceMemoryCallsAndChangeNothing()
    {
        final KeyRig k = KeyRig.connectx5();
        final long max = k.rig.deviceB.profile().maxDmSizeBytes();
        final dev.rnicsim.verbs.DeviceMemory dm = k.rig.ctxB.allocDm(4096);
        final Footprint before = k.footprintB();

        assertThat(refused(() -> k.rig.ctxB.allocDm(max + 1)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> k.rig.ctxB.allocDm(0)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> k.rig.ctxB.allocDm(max)).errnoName()).as("4 KiB are taken").isEqualTo(Errno.ENOMEM);
        assertThat(refused(() -> dm.memcpyTo(4090, new byte[8])).errnoName()).isEqualTo(Errno.EFAULT);
        assertThat(refused(() -> dm.memcpyFrom(4097, 1)).errnoName()).isEqualTo(Errno.EFAULT);
        assertThat(refused(() -> dm.memcpyTo(5, new byte[8])).errnoName()).as("offset not a multiple of 4")
            .isEqualTo(Errno.EINVAL);
        // mlx5_access_dm: the length must be a multiple of 4 too, reading as writing.
        assertThat(refused(() -> dm.memcpyTo(8, new byte[6])).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> dm.memcpyFrom(8, 6)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> dm.memcpyFrom(3, 4)).errnoName()).isEqualTo(Errno.EINVAL);
        // ibv_alloc_dm(3): the MR must be zero-based; the range must lie in the device memory.
        assertThat(refused(() -> k.rig.pdB.regDmMr(dm, 0, 4096, RuleRig.LOCAL)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> k.rig.pdB.regDmMr(dm, 2048, 4096, EnumSet.of(Access.LOCAL_WRITE,
            Access.ZERO_BASED))).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> k.rig.pdB.regDmMr(dm, 0, 4096, EnumSet.of(Access.LOCAL_WRITE, Access.ZERO_BASED,
            Access.MW_BIND))).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(k.footprintB()).isEqualTo(before);
        final MemoryRegion mr = k.rig.pdB.regDmMr(dm, 0, 4096, EnumSet.of(Access.LOCAL_WRITE, Access.ZERO_BASED));
        // ibv_free_dm while an MR uses it is EBUSY; rereg of a DM MR is an input error.
        assertThat(refused(dm::close).errnoName()).isEqualTo(Errno.EBUSY);
        assertThat(catchThrowableOfType(ReregException.class, () -> mr.rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS),
            null, 0, 0, RuleRig.LOCAL)).reregError()).isEqualTo(ReregException.ERR_INPUT);
        mr.close();
        dm.close();
        assertThat(k.rig.ctxB.allocDm(max).lengthBytes()).as("all of it is free again").isEqualTo(max);
        assertThat(refused(() -> KeyRig.of(DeviceProfiles.rxe()).rig.ctxB.allocDm(4096)).errnoName())
            .isEqualTo(Errno.EOPNOTSUPP);
    }

    // ------------------------------------------------------------------ ibv_reg_mr_ex

    @Test
    void shouldRegisterInAddressModeWithAnIovaAndInFdMode()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        final long iova = 0x5_0000_0000L;

        final MemoryRegion mr = k.rig.pdB.regMrEx(MrInitAttr.address(buf, 2 * PAGE, RuleRig.REMOTE_ALL)
            .withIova(iova));

        assertThat(mr.iova()).isEqualTo(iova);
        assertThat(mr.addr()).isEqualTo(buf);
        assertThat(k.write(k.rig.qpA, iova + PAGE, mr.rkey(), 32, 4)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.rig.processB().read(buf + PAGE, 32)).isEqualTo(RuleRig.pattern(32, 4));
        final SimGpu gpu = k.rig.deviceB.host().addGpu("gpu0", 64L << 20, SimGpu.DEFAULT_BAR1_BYTES,
            GpuTopology.PIX);
        final int fd = gpu.exportDmabuf(gpu.allocate(2L << 20), 0, 2L << 20);
        final MemoryRegion dmabuf = k.rig.pdB.regMrEx(MrInitAttr.dmabuf(fd, 0, 1L << 20, 0x4000_0000L,
            EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE)));
        assertThat(dmabuf).isInstanceOf(SimPeerMr.class);
    }

    @Test
    void shouldRefuseABadCompMaskWithEinvalBeforeAnythingHappens()
    {
        // ibv_reg_mr(3), ibv_reg_mr_ex: address mode and fd mode are exclusive and one is required.
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        final Footprint before = k.footprintB();
        final var local = RuleRig.LOCAL;

        final long both = MrInitAttr.MASK_ADDR | MrInitAttr.MASK_FD;
        assertThat(refused(() -> k.rig.pdB.regMrEx(new MrInitAttr(both, buf, PAGE, 0, 3, 0, local))).errnoName())
            .isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> k.rig.pdB.regMrEx(new MrInitAttr(MrInitAttr.MASK_IOVA, buf, PAGE, buf, -1, 0,
            local))).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> k.rig.pdB.regMrEx(new MrInitAttr(MrInitAttr.MASK_FD_OFFSET, 0, PAGE, 0, -1, 0,
            local))).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> k.rig.pdB.regMrEx(new MrInitAttr(MrInitAttr.MASK_ADDR | 0x100, buf, PAGE, 0, -1,
            0, local))).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> k.rig.pdB.regMrEx(new MrInitAttr(MrInitAttr.MASK_ADDR | MrInitAttr.MASK_DMAH, buf,
            PAGE, 0, -1, 0, local))).errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        // The mode's own rules still apply: REMOTE_WRITE without LOCAL_WRITE.
        assertThat(refused(() -> k.rig.pdB.regMrEx(MrInitAttr.address(buf, PAGE, EnumSet.of(Access.REMOTE_WRITE))))
            .errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(k.footprintB()).isEqualTo(before);
    }
}
