//! The only module with `unsafe`: raw libc calls for spawning sandboxed children (pipes that
//! carry data to bwrap, `pre_exec` setup: session, controlling tty, inherited fds,
//! `PR_SET_NO_NEW_PRIVS`), pseudo-terminals, and signalling process groups.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// What the child does between fork and exec.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChildSetup {
    /// Fds the child must inherit (their close-on-exec flag is cleared in the child only).
    pub(crate) inherit_fds: Vec<RawFd>,
    /// Start a new session (and process group) so the whole tree can be signalled.
    pub(crate) new_session: bool,
    /// Make this fd (a pty slave, already the child's stdin) the controlling terminal.
    pub(crate) controlling_tty: bool,
    /// Set `PR_SET_NO_NEW_PRIVS`.
    pub(crate) no_new_privs: bool,
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Installs `setup` as the `pre_exec` hook of `command`.
pub(crate) fn configure_child(command: &mut tokio::process::Command, setup: ChildSetup) {
    let hook = move || -> io::Result<()> {
        // Only async-signal-safe calls below: fcntl, setsid, ioctl, prctl. No allocation
        // (the fd list was allocated before fork and is only read).
        for &fd in &setup.inherit_fds {
            // SAFETY: fcntl on an fd number has no memory-safety requirements; a bad fd only
            // yields EBADF, which we report.
            let flags = check(unsafe { libc::fcntl(fd, libc::F_GETFD) })?;
            // SAFETY: as above.
            check(unsafe { libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) })?;
        }
        if setup.new_session {
            // SAFETY: setsid takes no arguments; it fails only if we already lead a group,
            // which a freshly forked child never does.
            check(unsafe { libc::setsid() })?;
        }
        if setup.controlling_tty {
            // SAFETY: TIOCSCTTY takes an int argument; fd 0 is the pty slave installed as
            // stdin by the Command before this hook runs, and we just became session leader.
            check(unsafe { libc::ioctl(0, libc::TIOCSCTTY, 0) })?;
        }
        if setup.no_new_privs {
            // SAFETY: prctl with PR_SET_NO_NEW_PRIVS takes plain integer arguments.
            check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })?;
        }
        Ok(())
    };
    // SAFETY: the hook runs between fork and exec and only makes async-signal-safe syscalls
    // on data captured by value; it touches no locks or allocator state.
    unsafe {
        command.pre_exec(hook);
    }
}

/// A close-on-exec pipe whose read end yields `data` then EOF (for bwrap's `--seccomp FD` and
/// `--ro-bind-data FD`). `data` must fit the pipe buffer (64 KiB).
pub(crate) fn pipe_with_data(data: &[u8]) -> io::Result<OwnedFd> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 writes two fds into the 2-element array we pass.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both fds were just created by pipe2 and are owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut written = 0;
    while written < data.len() {
        let rest = &data[written..];
        // SAFETY: the pointer and length describe the live `rest` slice.
        let n = unsafe { libc::write(write.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        written += usize::try_from(n).expect("write returned a non-negative count");
    }
    drop(write);
    Ok(read)
}

/// A new pseudo-terminal: `(master, slave)`, both close-on-exec, with a 24x80 window.
pub(crate) fn open_pty() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut master: RawFd = -1;
    let mut slave: RawFd = -1;
    let size = libc::winsize {
        ws_row: 24,
        ws_col: 80,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes the two fds into our locals; name and termios may be null; the
    // winsize pointer refers to a live local.
    check(unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    })?;
    // SAFETY: openpty just created both fds; nothing else owns them.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    for fd in [master.as_raw_fd(), slave.as_raw_fd()] {
        // SAFETY: fcntl on fds we own.
        check(unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) })?;
    }
    Ok((master, slave))
}

/// Sends `signal` to process group `pgid`; a group that is already gone is not an error.
pub(crate) fn kill_process_group(pgid: u32, signal: libc::c_int) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg has no memory-safety requirements; ESRCH for a vanished group is fine.
    unsafe {
        libc::killpg(pgid, signal);
    }
}
