package dev.rnicsim.keys;

import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.QueuePair;
import java.util.Set;

/**
 * The types of a {@link KeyWorld}'s reference model of host beta: frames with their bytes, map counts and pins, app_b's
 * pages, buffers, the rings of CQs and QPs, QP pairs, PDs, MRs, windows and the keys issued.
 */
final class WorldModel
{
    private WorldModel()
    {
    }

    /** The bytes of a frame nothing has written: read only. */
    private static final byte[] ZERO_BYTES = new byte[(int)KeyWorld.PAGE];

    /** A physical frame of the model. */
    static final class Frame
    {
        /** Its bytes; null while every byte is 0 (most frames, rings' among them, are never written). */
        private byte[] data;
        /** Page-table entries mapping it (parent and children). */
        int mapCount;
        /** Pins held on it (one per MR page or ring page). */
        int pins;
        /**
         * The physical frame whose 4 KiB the final byte check ({@link WorldChecks#checkAllBytes}) found equal to its
         * bytes through an MR, and that check's number; -1 before: the check of the pages then skips that frame.
         */
        long checkedPhys = -1;
        int checkedIn;

        /** @param data its bytes, or null for a frame of zeros. */
        Frame(final byte[] data)
        {
            this.data = data;
        }

        /** @return its bytes, to read only. */
        byte[] bytes()
        {
            return data == null ? ZERO_BYTES : data;
        }

        /** @return true while it holds no bytes of its own: every byte is 0. */
        boolean zeros()
        {
            return data == null;
        }

        /** @return its bytes, to write. */
        byte[] writable()
        {
            if (data == null)
            {
                data = new byte[(int)KeyWorld.PAGE];
            }
            return data;
        }

        /** @return a copy of its bytes (null for zeros), for a new frame. */
        byte[] copyOfBytes()
        {
            return data == null ? null : data.clone();
        }
    }

    /** The shared zero page: never written. */
    static final Frame ZERO = new Frame(null);

    /** A mapped page of app_b. */
    static final class Page
    {
        /** Null: never faulted in; {@link #ZERO}: the zero page; else its frame (the swap slot's bytes if swapped). */
        Frame frame;
        boolean swapped;
        boolean dontfork;
    }

    record Buf(String name, long addr, long lengthBytes)
    {
    }

    /** A ring of a CQ or QP: memory the library maps and the kernel pins. */
    static final class Ring
    {
        long addr;
        int pages;
        Frame[] frames;
    }

    static final class Qp
    {
        QueuePair sim;
        Ring ring;
        boolean live;
    }

    /** The QP pair serving PD pd_bN: qaN on host a, qbN in pd_bN on host b. */
    static final class Pair
    {
        QueuePair qa;
        Qp qb;
        boolean broken;
    }

    static final class PdM
    {
        final int index;
        final String name;
        SimPd sim;
        boolean live;
        Pair pair;

        PdM(final int index)
        {
            this.index = index;
            this.name = "pd_b" + index;
        }
    }

    static final class MrM
    {
        final String name;
        SimMr sim;
        PdM pd;
        int key;
        long addr;
        long lengthBytes;
        /** Its rights; set through {@link #access(Set)}, which keeps {@link #accessBits} with them. */
        Set<Access> access;
        /** {@link #access} as the MPT entry holds it ({@link Access#toBits}): compared after every action. */
        int accessBits;
        Frame[] frames;
        boolean writePin;
        long entries;
        long reserved;
        boolean live;
        int windows;

        MrM(final String name)
        {
            this.name = name;
        }

        /** Sets its rights (a copy) and their bits. */
        void access(final Set<Access> rights)
        {
            access = Set.copyOf(rights);
            accessBits = Access.toBits(access);
        }

        long firstPage()
        {
            return addr & -KeyWorld.PAGE;
        }

        int pages()
        {
            return pages(addr, lengthBytes);
        }

        static int pages(final long addr, final long len)
        {
            return (int)((((addr + len + KeyWorld.PAGE - 1) & -KeyWorld.PAGE) - (addr & -KeyWorld.PAGE))
                / KeyWorld.PAGE);
        }
    }

    static final class MwM
    {
        final String name;
        final MwType type;
        SimMw sim;
        PdM pd;
        int tableKey;
        int shownKey;
        boolean live;
        boolean bound;
        MrM mr;
        long lo;
        long len;
        /** Its rights while bound; set through {@link #rights(Set)}, which keeps {@link #rightsBits} with them. */
        Set<Access> rights = Set.of();
        /** {@link #rights} as the MPT entry holds them ({@link Access#toBits}): compared after every action. */
        int rightsBits;
        Qp qp;

        MwM(final String name, final MwType type)
        {
            this.name = name;
            this.type = type;
        }

        /** Sets its rights (a copy) and their bits. */
        void rights(final Set<Access> r)
        {
            rights = Set.copyOf(r);
            rightsBits = Access.toBits(rights);
        }
    }

    /** A key named {@code kN} in the script. */
    static final class KeyName
    {
        final int label;
        final String name;
        final int value;
        final String issuer;
        /** The range of its issuer when issued: where accesses with it aim. */
        final long lo;
        final long len;
        final boolean mrKey;
        /** Allocations of its MPT index when its MR stopped holding it; -1 while held. */
        int allocationsAtDeath = -1;

        KeyName(final int label, final int value, final String issuer, final long lo, final long len,
            final boolean mrKey)
        {
            this.label = label;
            this.name = "k" + label;
            this.value = value;
            this.issuer = issuer;
            this.lo = lo;
            this.len = len;
            this.mrKey = mrKey;
        }
    }

}
