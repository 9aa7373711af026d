package osenv

// utimeOmit is UTIME_OMIT from darwin's <sys/stat.h>.
const utimeOmit = -2
