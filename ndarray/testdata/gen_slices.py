# Derives the expected results of ndarray_slice_test.go's table from NumPy.
import numpy as np
a = np.arange(60).reshape(3, 4, 5)
ix = np.ix_
# (name, go indices per Slice call, numpy expression, view?)
cases = [
 ("At drops the axis", ["At(1)"], "a[1]", True),
 ("negative At counts from the end", ["At(-1), At(-2)"], "a[-1, -2]", True),
 ("all At gives a scalar", ["At(2), At(3), At(4)"], "a[2, 3, 4]", True),
 ("missing trailing indices mean All", ["All(), At(0)"], "a[:, 0]", True),
 ("length-1 Range keeps the axis", ["Range(1, 2)"], "a[1:2]", True),
 ("Range with negative bounds", ["All(), Range(-3, -1)"], "a[:, -3:-1]", True),
 ("empty Range", ["Range(2, 2)"], "a[2:2]", True),
 ("reversed bounds select nothing", ["All(), Range(3, 1)"], "a[:, 3:1]", True),
 ("bounds past the end are clamped", ["Range(1, 100), Range(-100, 2)"], "a[1:100, -100:2]", True),
 ("RangeStep with a step", ["All(), All(), RangeStep(0, 5, 2)"], "a[:, :, 0:5:2]", True),
 ("RangeStep backwards", ["All(), RangeStep(3, 0, -2)"], "a[:, 3:0:-2]", True),
 ("RangeStep backwards past the start", ["RangeStep(-1, -100, -1)"], "a[-1:-100:-1]", True),
 ("Step every third", ["Ellipsis(), Step(3)"], "a[..., ::3]", True),
 ("Step negative", ["Ellipsis(), Step(-2)"], "a[..., ::-2]", True),
 ("From", ["From(1), From(-2)"], "a[1:, -2:]", True),
 ("To", ["To(-1), To(1)"], "a[:-1, :1]", True),
 ("Flip the first axis", ["Flip()"], "a[::-1]", True),
 ("Flip the last axis", ["Ellipsis(), Flip()"], "a[..., ::-1]", True),
 ("Even", ["All(), Even()"], "a[:, ::2]", True),
 ("Odd", ["All(), All(), Odd()"], "a[:, :, 1::2]", True),
 ("Mod 3", ["All(), All(), Mod(3)"], "a[:, :, ::3]", True),
 ("NewAxis in front", ["NewAxis()"], "a[np.newaxis]", True),
 ("NewAxis in the middle with At", ["At(0), NewAxis(), At(1)"], "a[0, np.newaxis, 1]", True),
 ("NewAxis at the end after Ellipsis", ["Ellipsis(), NewAxis()"], "a[..., np.newaxis]", True),
 ("Ellipsis in the middle", ["At(1), Ellipsis(), At(-1)"], "a[1, ..., -1]", True),
 ("Ellipsis standing for nothing", ["At(0), At(1), Ellipsis(), At(2)"], "a[0, 1, ..., 2]", True),
 ("Incl evenly spaced is a view", ["All(), At(0), Incl(0, 2, 4)"], "a[:, 0, [0, 2, 4]]", True),
 ("Incl single position keeps the axis", ["Incl(-1)"], "a[[-1]]", True),
 ("Incl uneven is a copy", ["All(), Incl(3, 0, 1)"], "a[:, [3, 0, 1]]", False),
 ("Incl repeated positions is a copy", ["At(2), Incl(1, 1)"], "a[2, [1, 1]]", False),
 ("Incl of two positions on two axes is a view", ["Incl(0, 2), Incl(3, 1)"], "a[ix([0, 2], [3, 1])]", True),
 ("Incl on two axes selects the outer product", ["Incl(0, 2, 1), Incl(3, 1)"], "a[ix([0, 2, 1], [3, 1])]", False),
 ("Excl leaving an even set is a view", ["All(), All(), Excl(1, 3)"], "a[:, :, [0, 2, 4]]", True),
 ("Excl leaving an uneven set is a copy", ["All(), Excl(-2)"], "a[:, [0, 1, 3]]", False),
 ("Excl everything selects nothing", ["Excl(0, 1, 2)"], "a[[]]", True),
 ("Take with a 2x2 index array", ["All(), Take(take22)"], "a[:, np.array([[0, 3], [-1, 1]])]", False),
 ("view of a view", ["Flip(), Range(1, 4)", "At(-1), All(), Odd()"], "a[::-1, 1:4][-1, :, 1::2]", True),
 ("view of a strided view", ["Step(2), Step(-1), Step(2)", "All(), Range(0, 2), Flip()"], "a[::2, ::-1, ::2][:, 0:2, ::-1]", True),
 ("copy of a strided view", ["Step(2), Step(-1)", "Incl(1, 0), Incl(0, 1, 3)"], "a[::2, ::-1][ix([1, 0], [0, 1, 3])]", False),
]
print("// Code derived with NumPy %s by testdata/gen_slices.py; do not edit by hand." % np.__version__)
print("// a is np.arange(60).reshape(3, 4, 5); take22 is [[0, 3], [-1, 1]].")
print("var sliceCases = []sliceCase{")
for name, steps, expr, view in cases:
    r = eval(expr)
    shape = ", ".join(str(d) for d in r.shape)
    vals = ", ".join(str(v) for v in r.ravel())
    go_steps = ", ".join("{%s}" % s for s in steps)
    print('\t{ // %s' % expr)
    print('\t\tname: %r,' % name if False else '\t\tname: "%s",' % name)
    print('\t\tsteps: [][]Index{%s},' % go_steps)
    print('\t\tshape: Shape{%s},' % shape)
    print('\t\tvalues: []int64{%s},' % vals)
    print('\t\tview: %s,' % ("true" if view else "false"))
    print('\t},')
print("}")
# Reshapes of strided views: (name, go slice, numpy slice expr, new shape, view?)
b = np.arange(24).reshape(4, 6)
reshapes = [
 ("row-major merge", "All()", "b", (2, 12), True),
 ("split a strided axis", "Step(2)", "b[::2]", (2, 2, 3), True),
 ("merge rows of a column slice needs a copy", "All(), Range(0, 3)", "b[:, 0:3]", (12,), False),
 ("split inside a column slice stays a view", "All(), Range(0, 4)", "b[:, 0:4]", (4, 2, 2), True),
 ("transpose flattened is a copy", "Permute", "b.T", (24,), False),
 ("flip flattened is a copy", "Flip()", "b[::-1]", (-1,), False),
 ("flip split keeps a view", "Flip()", "b[::-1]", (2, 2, 6), True),
 ("inferred dimension", "Step(2), Step(2)", "b[::2, ::2]", (3, -1), False),
 ("adding unit dimensions", "Step(3)", "b[::3]", (1, 2, 1, 6, 1), True),
]
print("var reshapeCases = []reshapeCase{")
for name, sl, expr, shape, view in reshapes:
    r = eval(expr).reshape(shape)
    print('\t{ // %s.reshape(%s)' % (expr, shape))
    print('\t\tname: "%s",' % name)
    if sl == "Permute":
        print('\t\ttranspose: true,')
    else:
        print('\t\tslice: []Index{%s},' % sl)
    print('\t\tto: []int64{%s},' % ", ".join(str(d) for d in shape))
    print('\t\tshape: Shape{%s},' % ", ".join(str(d) for d in r.shape))
    print('\t\tvalues: []int64{%s},' % ", ".join(str(v) for v in r.ravel()))
    print('\t\tview: %s,' % ("true" if view else "false"))
    print('\t},')
print("}")
